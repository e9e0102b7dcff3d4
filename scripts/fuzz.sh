#!/usr/bin/env bash
# Builds the libFuzzer harnesses (tests/fuzz/) with clang, ASan and UBSan in build-fuzz/, runs
# each over its corpus in tests/fuzz/corpus/ (the regression check), then fuzzes each for
# FUZZ_SECONDS seconds (argument 1, default 60; 0 runs the corpus only), one harness per core at
# a time. New inputs go to build-fuzz/corpus/, never into the repository; a finding stops the script with its input
# under build-fuzz/artifacts/ (turn it into a regression test: tests/fuzz/README.md).
# Usage: scripts/fuzz.sh [seconds] [harness...]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
shift || true
all=(config gpu cluster profile saved_plan safetensors safetensors_index nccl_tests trace layout)
harnesses=("$@")
if ((${#harnesses[@]} == 0)); then harnesses=("${all[@]}"); fi

# A unity build, as make's: each batch parses the headers and instantiates nlohmann::json once.
cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=None -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_CXX_FLAGS="-O1 -gline-tables-only" -DCMAKE_UNITY_BUILD=ON \
  -DSHARDWISE_FUZZ=ON -DSHARDWISE_BUILD_TESTS=OFF \
  -DSHARDWISE_BUILD_BENCH=OFF -DSHARDWISE_WITH_MPI=OFF -DSHARDWISE_WITH_CUDA=OFF >/dev/null
cmake --build build-fuzz -j "$(nproc)" --target "${harnesses[@]/#/fuzz_}"

mkdir -p build-fuzz/artifacts
export ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
flags="-rss_limit_mb=2048 -timeout=10 -max_len=16384"

# The regression check: every corpus input once.
for h in "${harnesses[@]}"; do
  echo "== fuzz_$h: corpus ($(ls "tests/fuzz/corpus/$h" | wc -l) inputs)"
  # shellcheck disable=SC2086
  "build-fuzz/fuzz/fuzz_$h" $flags "-artifact_prefix=build-fuzz/artifacts/$h-" -runs=0 \
    "tests/fuzz/corpus/$h" 2>"build-fuzz/fuzz_$h.corpus.log" ||
    { tail -40 "build-fuzz/fuzz_$h.corpus.log"; exit 1; }
done
if ((seconds == 0)); then
  echo "fuzz: ${#harnesses[@]} corpora, no finding"
  exit 0
fi

# Fuzzing: one harness per core at a time, each for `seconds`.
fuzz_one() {
  local h="$1"
  mkdir -p "build-fuzz/corpus/$h"
  # shellcheck disable=SC2086
  if "build-fuzz/fuzz/fuzz_$h" $flags "-artifact_prefix=build-fuzz/artifacts/$h-" \
      -max_total_time="$seconds" -print_final_stats=1 "build-fuzz/corpus/$h" \
      "tests/fuzz/corpus/$h" 2>"build-fuzz/fuzz_$h.log"; then
    echo "== fuzz_$h: $(grep -o 'number_of_executed_units: [0-9]*' "build-fuzz/fuzz_$h.log") in $seconds s"
  else
    echo "== fuzz_$h: FINDING"; tail -60 "build-fuzz/fuzz_$h.log"; return 1
  fi
}
export -f fuzz_one
export seconds flags
printf '%s\n' "${harnesses[@]}" | xargs -P "$(nproc)" -I{} bash -c 'fuzz_one {}'
echo "fuzz: ${#harnesses[@]} harnesses, no finding"
