#!/usr/bin/env bash
# Installs missing packages, then configures and builds one preset (default: release).
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-release}"
bash tools/setup.sh
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset"
