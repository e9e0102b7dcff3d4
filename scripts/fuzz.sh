#!/usr/bin/env bash
# Builds the libFuzzer harnesses (tests/fuzz/) with clang, ASan and UBSan in build-fuzz/, runs
# each over its corpus in tests/fuzz/corpus/ (the regression check), then fuzzes each for
# FUZZ_SECONDS seconds (argument 1, default 60; 0 runs the corpus only). New inputs go to
# build-fuzz/corpus/, never into the repository; a finding stops the script with its input
# under build-fuzz/artifacts/ (turn it into a regression test: tests/fuzz/README.md).
# Usage: scripts/fuzz.sh [seconds] [harness...]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
shift || true
all=(config gpu cluster profile saved_plan safetensors safetensors_index nccl_tests trace layout)
harnesses=("$@")
if ((${#harnesses[@]} == 0)); then harnesses=("${all[@]}"); fi

cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=None -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_CXX_FLAGS="-O1 -gline-tables-only" -DSHARDWISE_FUZZ=ON -DSHARDWISE_BUILD_TESTS=OFF \
  -DSHARDWISE_BUILD_BENCH=OFF -DSHARDWISE_WITH_MPI=OFF >/dev/null
cmake --build build-fuzz -j "$(nproc)" --target "${harnesses[@]/#/fuzz_}"

mkdir -p build-fuzz/artifacts
export ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
for h in "${harnesses[@]}"; do
  seeds="tests/fuzz/corpus/$h"
  work="build-fuzz/corpus/$h"
  mkdir -p "$work"
  flags=(-rss_limit_mb=2048 -timeout=10 -max_len=16384 "-artifact_prefix=build-fuzz/artifacts/$h-")
  echo "== fuzz_$h: corpus ($(ls "$seeds" | wc -l) inputs)"
  "build-fuzz/fuzz/fuzz_$h" "${flags[@]}" -runs=0 "$seeds" 2>"build-fuzz/fuzz_$h.corpus.log" ||
    { tail -40 "build-fuzz/fuzz_$h.corpus.log"; exit 1; }
  if ((seconds > 0)); then
    echo "== fuzz_$h: fuzzing for $seconds s"
    "build-fuzz/fuzz/fuzz_$h" "${flags[@]}" -max_total_time="$seconds" -print_final_stats=1 \
      "$work" "$seeds" 2>"build-fuzz/fuzz_$h.log" || { tail -60 "build-fuzz/fuzz_$h.log"; exit 1; }
    grep -E "stat::number_of_executed_units|Done [0-9]+ runs" "build-fuzz/fuzz_$h.log" | tail -2
  fi
done
echo "fuzz: ${#harnesses[@]} harnesses, no finding"
