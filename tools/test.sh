#!/usr/bin/env bash
# The README's test command: setup, build, run every test.
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-release}"
bash tools/build.sh "$preset"
ctest --preset "$preset"
