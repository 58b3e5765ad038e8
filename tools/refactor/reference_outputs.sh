#!/usr/bin/env bash
# Writes a fixed reference set of ispsim outputs into OUT, for checking that a
# refactoring changes no output: run it before and after, then `diff -r`.
#   tools/refactor/reference_outputs.sh ISPSIM OUT
# Covers every platform on the sample traces and three generated ones (run text,
# CSV summary, JSON and CSV statistics, timeline, VCD with its view), compare
# (CSV, JSON), describe (every platform and the listing), CIM runs and a sweep.
# Takes about 4 minutes on 2 cores. Error lines are kept too (with exit codes).
set -u
if [ $# -ne 2 ]; then echo "usage: $0 ISPSIM OUT" >&2; exit 2; fi
bin=$(realpath "$1")
repo=$(cd "$(dirname "$0")/../.." && pwd)
samples=$repo/traces/samples
rm -rf "$2" && mkdir -p "$2" && cd "$2" || exit 2
# Traces go by relative names, so that messages naming them match across checkouts.
cp "$samples"/blend_small.trace "$samples"/blend_toy.trace "$samples"/nand_stream.trace .
"$bin" trace gen --shape SmolLM2-1.7B --dataset hpt --out hpt.trace >gen.txt 2>&1
"$bin" trace gen --shape OPT-1.3B --dataset cad --out cad.trace >>gen.txt 2>&1
"$bin" trace gen --decode --shape SmolLM2-1.7B --context-tokens 2048 --steps 8 --out dec.trace >>gen.txt 2>&1
traces="blend_small blend_toy nand_stream hpt cad dec"
for p in $(ls "$repo"/platforms/*.textproto | xargs -n1 basename | sed 's/\.textproto$//'); do
  "$bin" describe --platform "$p" >"describe_$p.txt" 2>&1; echo "exit $?" >>"describe_$p.txt"
  for t in $traces; do
    o=run_${p}_$t
    "$bin" run -p "$p" -t "$t.trace" --stats "$o.json" --timeline "$o.timeline.json" --format csv >"$o.csv" 2>"$o.err"
    echo "exit $?" >>"$o.err"
    "$bin" run -p "$p" -t "$t.trace" --stats "$o.stats.csv" >"$o.txt" 2>>"$o.err"
    echo "exit $?" >>"$o.err"
  done
  "$bin" run -p "$p" -t blend_toy.trace --vcd "vcd_$p.vcd" >"vcd_$p.txt" 2>&1; echo "exit $?" >>"vcd_$p.txt"
done
for t in blend_small hpt cad dec; do
  "$bin" compare --trace "$t.trace" --format csv >"compare_$t.csv" 2>>compare.err
  "$bin" compare --trace "$t.trace" --format json >"compare_$t.json" 2>>compare.err
done
"$bin" describe >describe.txt 2>&1
cat >sweep.txtpb <<EOT
name: "reference"
axis { name: "platform" values: "memllm" values: "memllm_base" values: "memllm_perch" values: "gpu_precompute" }
axis { name: "trace.file" values: "blend_small.trace" }
axis { name: "ssd.dram_bandwidth_gbps" values: "12.8" values: "25.6" }
EOT
"$bin" sweep sweep.txtpb --out sweep -j 2 >sweep.txt 2>&1; echo "exit $?" >>sweep.txt
# The version (with its commit) is in the sweep's results; it differs by construction.
rm -f ./*.trace
