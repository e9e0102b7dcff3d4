#!/usr/bin/env bash
# Whole-process speed of the decision commands (issue 24's targets), each run RUNS times after a
# warm-up, the median CPU time (user + sys) and wall time quoted against its target and the
# figure before the application layer was rebuilt (issue 24's report). A benchmark, not a test:
# it prints, it never fails.
#   bench/decision_speed.sh [BINARY] [RUNS]      (default build/shardwise, 5)
set -euo pipefail
bin="${1:-build/shardwise}"
runs="${2:-5}"

# median of the numbers on stdin
median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

# bench NAME TARGET_S BEFORE ARGS...: times `shardwise ARGS`.
bench() {
  local name="$1" target="$2" before="$3"
  shift 3
  "$bin" "$@" >/dev/null 2>&1  # warm-up (and the cached catalog pages)
  local cpu=() wall=() times
  times=$(mktemp)
  for ((i = 0; i < runs; ++i)); do
    /usr/bin/time -o "$times" -f "%U %S %e" "$bin" "$@" >/dev/null 2>&1 || true
    read -r user sys elapsed <"$times"
    cpu+=("$(awk -v u="$user" -v s="$sys" 'BEGIN {print u + s}')")
    wall+=("$elapsed")
  done
  rm -f "$times"
  printf '%-58s cpu %6.2f s  wall %6.2f s  target < %s s  before: %s\n' "$name" \
    "$(printf '%s\n' "${cpu[@]}" | median)" "$(printf '%s\n' "${wall[@]}" | median)" \
    "$target" "$before"
}

echo "median of $runs runs each, after a warm-up; $(nproc) cores"
bench "plan DeepSeek-V3, 1,024-GPU SuperPod (disagg + load)" 1 "2.8 s on 2026-11-28, 4-8 s at first" \
  plan --model deepseek-v3 --cluster h100-superpod --dtype fp8
bench "plan DeepSeek-V3, 800,000 H100 (--nodes 100000)" 10 "did not finish in 60 s" \
  plan --model deepseek-v3 --cluster dgx-h100 --nodes 100000 --dtype fp8
bench "recommend DeepSeek-R1, H200, 20 req/s, p99 2 s / 50 ms" 3 "not reported" \
  recommend --model deepseek-r1 --cluster dgx-h200 --rate 20 --isl 2048 --osl 1024 \
  --max-ttft-ms 2000 --max-tpot-ms 50 --percentile p99
