#!/usr/bin/env bash
# Installs the Debian 12 packages ispsim needs, only those that are missing.
# Idempotent and silent when everything is present.
set -euo pipefail

packages=(
  cmake g++ make pkg-config ccache
  libsystemc-dev
  libboost-json1.81-dev libboost-program-options1.81-dev
  libprotobuf-dev protobuf-compiler
  libgtest-dev libbenchmark-dev
  gtkwave            # vcd2fst validates every VCD the tests write
  xvfb x11-apps netpbm  # the GTKWave view test: a real GTKWave under Xvfb, screenshot (xwd -> PNG)
  clang libclang-rt-14-dev libfuzzer-14-dev  # fuzz/ targets (-fsanitize=fuzzer), tools/fuzz.sh
  python3            # tools/calibrate/calibrate.py (standard library only) and its ctest
  python3-matplotlib # tools/plot: figures of sweeps and `ispsim reproduce` (run with /usr/bin/python3)
  python3-pytest python3-pandas  # the Python package's tests (tests/python) and its DataFrames
  slurm-wlm munge    # the Slurm test of `ispsim sweep --slurm` (a single-node cluster on localhost)
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "setup: installing ${missing[*]}" >&2
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
