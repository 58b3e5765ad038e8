#!/usr/bin/env bash
# A small sweep through a real Slurm: a single-node cluster on localhost
# (tools/slurm/local_cluster.sh, started and stopped here), the sweep submitted
# as a job array of 3 shards, waited for and collected; the results must be
# byte-identical to the same sweep run locally (but for the command line the
# JSON records). Prints its wall times.
# If the cluster cannot start, says why in one line and fails.
#
# usage: slurm_sweep_test.sh ISPSIM SOURCE_DIR
set -euo pipefail
ispsim="$1"
src="$2"
work="$(mktemp -d "${TMPDIR:-/tmp}/ispsim-slurm-test.XXXXXX")"
cluster="$work/cluster"
cleanup() {
  bash "$src/tools/slurm/local_cluster.sh" stop "$cluster" || true
  rm -rf "$work"
}
trap cleanup EXIT

cat >"$work/small.txtpb" <<SPEC
name: "slurm-small"
axis { name: "trace.model" values: "SmolLM2-135M" }
axis { name: "trace.dataset" values: "hpt" }
axis { name: "trace.docs" values: "2" }
axis { name: "trace.context_tokens" values: "64" }
axis { name: "trace.query_tokens" values: "8" }
axis { name: "trace.answer_tokens" values: "2" }
axis { name: "platform" values: "gpu_fullcompute" values: "gpu_precompute" values: "memllm" }
axis { name: "trace.ratio" values: "0.1" values: "0.2" }
axis { name: "host.dram_capacity_bytes" values: "8589934592" values: "100000000" }
SPEC

start=$(date +%s.%N)
if ! exports="$(bash "$src/tools/slurm/local_cluster.sh" start "$cluster")"; then
  exit 1  # local_cluster.sh said why, in one line
fi
eval "$exports"
up=$(date +%s.%N)

cd "$work"
"$ispsim" sweep small.txtpb --out local -j 2
local_done=$(date +%s.%N)
if ! "$ispsim" sweep small.txtpb --out viaslurm --slurm --shards 3 --submit --wait; then
  echo "slurm_sweep_test: the job array or its collection failed; task logs:" >&2
  tail -n 5 viaslurm/slurm/logs/*.log >&2 || true
  exit 1
fi
slurm_done=$(date +%s.%N)

for i in 0 1 2; do
  [ -f "viaslurm/shards/shard-$i-of-3.json" ] || { echo "slurm_sweep_test: shard $i wrote no results" >&2; exit 1; }
done
rows=$(($(wc -l <local/results.csv) - 1))
[ "$rows" -eq 12 ] || { echo "slurm_sweep_test: expected 12 result rows, got $rows" >&2; exit 1; }
grep -q ",oom," local/results.csv || { echo "slurm_sweep_test: no OOM row in the results" >&2; exit 1; }
cmp local/results.csv viaslurm/results.csv || { echo "slurm_sweep_test: CSV results differ" >&2; exit 1; }
# The JSON's provenance records each sweep's own command line; all else must match.
without_command() { sed 's/"command_line": "[^"]*"/"command_line": ""/' "$1"; }
cmp <(without_command local/results.json) <(without_command viaslurm/results.json) ||
  { echo "slurm_sweep_test: JSON results differ" >&2; exit 1; }
awk -v a="$start" -v b="$up" -v c="$local_done" -v d="$slurm_done" 'BEGIN {
  printf "slurm_sweep_test: 12 runs identical locally and through Slurm; cluster start %.1f s, local sweep %.1f s, Slurm array + collect %.1f s\n", b - a, c - b, d - c }'
