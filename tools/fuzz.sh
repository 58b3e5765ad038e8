#!/usr/bin/env bash
# Builds the libFuzzer targets (preset "fuzz": clang, ASan + UBSan) and runs
# each for SECONDS (default 30) on its committed seed corpus, one after another.
#   bash tools/fuzz.sh [SECONDS] [TARGET...]      e.g. bash tools/fuzz.sh 600 trace_reader
# New inputs found go to build/fuzz/corpus/<target>/ (not committed); a crash
# stops the script with the reproducer in build/fuzz/crashes/<target>/ and exit 1.
# Prints one line per target: executions, wall and CPU time, coverage (edges, features),
# corpus size. CPU time is the figure that counts on a shared machine.
# ISPSIM_FUZZ_RUNS=N also stops each target after N executions (the long run:
# ISPSIM_FUZZ_RUNS=10000000 bash tools/fuzz.sh 7200).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-30}"
shift || true
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(trace_reader trace_text chakra_import platform safetensors config tokenizer kv_index jsonl dict sweep workload drive_state result)

cmake --preset fuzz >/dev/null
nice -n 5 cmake --build build/fuzz -j2 --target $(printf '%s_fuzz ' "${targets[@]}") >/dev/null

# Each input is written to a scratch file (fuzz/fuzz_support.h): on a tmpfs that
# costs a few microseconds instead of a disk's file-system path.
if [ -z "${TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ]; then
  export TMPDIR=/dev/shm
fi

TIMEFORMAT='%U %S'  # what `time` prints: user and system CPU seconds
for t in "${targets[@]}"; do
  work="build/fuzz/corpus/$t"
  crashes="build/fuzz/crashes/$t"
  mkdir -p "$work" "$crashes"
  log="build/fuzz/$t.log"
  # -rss_limit_mb: the loaders must refuse oversized inputs, not allocate them.
  # The committed seeds are read, new inputs are written to $work only.
  # quarantine_size_mb=32 (ASan's default is 256): freed memory is recycled
  # sooner, so fewer fresh pages are faulted in and filled; 2-3x the executions
  # per second (fuzz/README.md). A freed block stays poisoned until 32 MB more
  # has been freed after it, so a use-after-free is still caught within that.
  started=$(date +%s)
  cpu_file=$(mktemp)
  if ! { time ASAN_OPTIONS=detect_leaks=1:quarantine_size_mb=32 "build/fuzz/fuzz/${t}_fuzz" -max_total_time="$seconds" -rss_limit_mb=2048 \
      -max_len=65536 -timeout=20 -print_final_stats=1 -runs="${ISPSIM_FUZZ_RUNS:--1}" -artifact_prefix="$crashes/" \
      "$work" "fuzz/corpus/$t" >"$log" 2>&1; } 2>"$cpu_file"; then
    rm -f "$cpu_file"
    echo "fuzz: $t FAILED (see $log; reproducer in $crashes/)" >&2
    tail -n 30 "$log" >&2
    exit 1
  fi
  elapsed=$(($(date +%s) - started))
  cpu=$(awk '{ printf "%.0f", $1 + $2 }' "$cpu_file")
  rm -f "$cpu_file"
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo '?')
  last=$(grep -E '^#[0-9]+' "$log" | tail -n 1)
  cov=$(echo "$last" | grep -o 'cov: [0-9]*' | grep -o '[0-9]*' || echo '?')
  ft=$(echo "$last" | grep -o 'ft: [0-9]*' | grep -o '[0-9]*' || echo '?')
  corpus=$(echo "$last" | grep -o 'corp: [0-9]*' | grep -o '[0-9]*' || echo '?')
  echo "fuzz: $t: ${runs} executions in ${elapsed} s (${cpu} s CPU), coverage ${cov} edges / ${ft} features, corpus ${corpus} inputs, 0 crashes"
done
