#!/usr/bin/env bash
# The README's demo command: setup, build, then
#   1. stream KV tiles from MemLLM's default flash (sequential and pipelined),
#      writing statistics and a VCD waveform into out/;
#   2. generate text with the project's trained model on the integer-only engine.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/build.sh release
ispsim=build/release/tools/ispsim/ispsim
mkdir -p out

echo "== NAND streaming microbenchmark: sequential (tR exposed) =="
"$ispsim" run --platform nand_stream --trace traces/samples/nand_stream.trace \
  --set stream.read_mode=SEQUENTIAL --stats out/nand_sequential.json
echo "== NAND streaming microbenchmark: three-stage die-level pipeline =="
"$ispsim" run --platform nand_stream --trace traces/samples/nand_stream.trace \
  --set stream.read_mode=PIPELINED --stats out/nand_pipelined.json --vcd out/nand_pipelined.vcd \
  --vcd-window 0us:200us
echo "statistics: out/nand_sequential.json out/nand_pipelined.json; waveform: out/nand_pipelined.vcd"

echo
echo "== Integer-only engine: greedy continuation with the project's trained model (INT8 weights, INT16 requantization) =="
"$ispsim" engine generate --model assets/brown-llama --prompt "The jury said" --tokens 32 --quant int16
