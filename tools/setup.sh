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
<<<<<<< HEAD
  xvfb x11-apps netpbm  # the GTKWave view test: a real GTKWave under Xvfb, screenshot (xwd -> PNG)
=======
  python3-matplotlib # tools/plot: figures of sweeps and `ispsim reproduce` (run with /usr/bin/python3)
  slurm-wlm munge    # the Slurm test of `ispsim sweep --slurm` (a single-node cluster on localhost)
>>>>>>> 973ecf7 (sweep: ispsim sweep SPEC (sweep.proto; cartesian product or listed points; run id = hash of the resolved platform and the trace; -j child processes with per-run atomic result files, resumable; tidy CSV/JSON results with status ok/oom/error and version; --shard I/N, --slurm [--submit --wait], --collect); tools/plot figures; reproduce memllm|cim; tests: cli_sweep_test, Plot, SlurmSweep on a local single-node cluster (tools/slurm/local_cluster.sh); child_process: completion callback, any finished child frees its slot)
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
