#!/usr/bin/env bash
# The README's demo command: setup, build, then
#   1. stream KV tiles from MemLLM's default flash (sequential and pipelined),
#      writing statistics, a VCD waveform and its GTKWave view into out/;
#   2. compare the six MemLLM platforms on a shipped RAG trace (table, CSV,
#      JSON, one Chrome timeline per platform);
#   3. RAG on the functional engine: a KV store of the demo documents, a
#      CacheBlend answer, an engine-emitted trace, and the platforms on it;
#   4. generate text with the project's trained model on the integer-only engine.
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
echo "waveform view (signals grouped, states by name): gtkwave out/nand_pipelined.gtkw"

echo
echo "== MemLLM platforms on a shipped trace (SmolLM2-135M shape, 2 x 200-token documents) =="
mkdir -p out/timelines
"$ispsim" compare --trace traces/samples/blend_small.trace --csv out/compare.csv --json out/compare.json \
  --timeline-dir out/timelines
echo "tables: out/compare.csv out/compare.json; timelines (open in https://ui.perfetto.dev): out/timelines/*.json"

echo
echo "== RAG on the engine: KV store, CacheBlend (15 % recomputed), engine-emitted trace =="
rm -rf out/rag-store
"$ispsim" engine precompute --model assets/brown-llama --docs assets/rag-demo/docs.jsonl --out out/rag-store
docs=ch16-1,ch16-2,cj76-2,ca10-1,ca10-2
query="How were Du Pont products promoted in the General Motors market?"
"$ispsim" engine blend --model assets/brown-llama --store out/rag-store --docs "$docs" --query "$query" --tokens 8
"$ispsim" trace gen --engine --model assets/brown-llama --store out/rag-store --docs "$docs" --query "$query" \
  --tokens 8 --out out/engine.trace
"$ispsim" compare --trace out/engine.trace

echo
echo "== Integer-only engine: greedy continuation with the project's trained model (INT8 weights, INT16 requantization) =="
"$ispsim" engine generate --model assets/brown-llama --prompt "The jury said" --tokens 32 --quant int16
