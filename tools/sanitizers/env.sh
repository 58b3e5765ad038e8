#!/usr/bin/env bash
# Runs a command (e.g. `ctest --preset asan`) with the project's sanitizer
# settings; see tools/sanitizers/README.md for why each is there.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
export ASAN_OPTIONS="suppressions=$here/asan.supp:detect_stack_use_after_return=0:detect_leaks=1:strict_string_checks=1:check_initialization_order=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:suppressions=$here/ubsan.supp${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
export LSAN_OPTIONS="suppressions=$here/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
exec "$@"
