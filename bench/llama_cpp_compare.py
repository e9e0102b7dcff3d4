#!/usr/bin/env python3
"""shardwise run against llama.cpp on the same checkpoint, weight format and thread count.

Never run in CI. Needs a CPU build of llama.cpp (see shared/peers/README.md for the flags) and a
checkpoint written twice by shared/peers/make_ckpt.py (safetensors for shardwise, GGUF for
llama.cpp), quantised by llama-quantize to F16, BF16 and Q8_0:

  make_ckpt.py CKPT --hidden 768 --heads 12 --kv-heads 4 --layers 12 --inter 2048 --vocab 32000
  for t in F16 BF16 Q8_0; do llama-quantize CKPT/model-f32.gguf CKPT/model-${t,,}.gguf $t; done
  bench/llama_cpp_compare.py LLAMA_CPP_BUILD/bin CKPT build/shardwise [PAIRS [FILTER [THREADS]]]

Each case runs shardwise and llama-bench in turn, PAIRS times (A B A B ...), and prints each
side's median tokens/s (each tool's own timing of the phase: shardwise run's decode or prefill
wall time, llama-bench's average over its repetition) and the median of the per-pair ratios.
Decode is batch 1 from a one-token prompt, 64 tokens (llama-bench tg64); prefill is a 128- or
512-token prompt (llama-bench pp128, pp512). shardwise with 2 threads runs both as tp2 (two
ranks of one thread) and as tp1 --threads 2. FILTER runs only the cases whose name contains it.
"""
import json
import os
import statistics
import subprocess
import sys

DECODE_TOKENS = 64


def shardwise(binary, ckpt, layout, threads, dtype, prompt, gen):
    out = subprocess.run(
        [binary, "run", "--model", f"{ckpt}/config.json", "--weights", ckpt, "--layout", layout,
         "--threads", str(threads), "--dtype", dtype, "--batch", "1", "--prompt-len",
         str(prompt), "--gen", str(gen), "--no-check", "--json"],
        check=True, capture_output=True, text=True).stdout
    r = json.loads(out)
    if gen > 1:
        return r["decode_tokens_per_s"]
    return prompt / r["prefill"]["wall_s"]


def llama_bench(bin_dir, gguf, threads, prompt, gen):
    out = subprocess.run(
        [f"{bin_dir}/llama-bench", "-m", gguf, "-t", str(threads), "-p", str(prompt), "-n",
         str(gen), "-r", "1", "-o", "jsonl"],
        check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])["avg_ts"]


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    bin_dir, ckpt, binary = sys.argv[1:4]
    pairs = int(sys.argv[4]) if len(sys.argv) > 4 else 5
    only = sys.argv[5] if len(sys.argv) > 5 else ""
    threads_only = int(sys.argv[6]) if len(sys.argv) > 6 else 0
    # (what, shardwise layout, threads per rank, --dtype, GGUF file, llama.cpp threads, phase)
    cases = []
    for dtype, gguf in [("fp32", "f32"), ("bf16", "bf16"), ("bf16", "f16"), ("int8", "q8_0")]:
        for layout, threads, peer_threads in [("tp1", 1, 1), ("tp2", 1, 2), ("tp1", 2, 2)]:
            cases.append((f"decode {dtype} vs {gguf.upper()}", layout, threads, dtype, gguf,
                          peer_threads, 1, DECODE_TOKENS + 1))
    for prompt in (128, 512):
        for layout, threads, peer_threads in [("tp1", 1, 1), ("tp2", 1, 2), ("tp1", 2, 2)]:
            cases.append((f"prefill {prompt} fp32 vs F32", layout, threads, "fp32", "f32",
                          peer_threads, prompt, 1))
    print(f"{'case':28} {'shardwise':>14} {'llama.cpp':>9} {'shardwise/s':>11} "
          f"{'llama.cpp t/s':>13} {'ratio':>6} {'load':>5}")
    for what, layout, threads, dtype, gguf, peer_threads, prompt, gen in cases:
        if only not in what or (threads_only and peer_threads != threads_only):
            continue
        ours, theirs, ratios = [], [], []
        for _ in range(pairs):
            a = shardwise(binary, ckpt, layout, threads, dtype, prompt, gen)
            b = llama_bench(bin_dir, f"{ckpt}/model-{gguf}.gguf", peer_threads,
                            prompt if gen == 1 else 0, 0 if gen == 1 else DECODE_TOKENS)
            ours.append(a)
            theirs.append(b)
            ratios.append(a / b)
        side = f"{layout} x{threads}"
        print(f"{what:28} {side:>14} {'-t ' + str(peer_threads):>9} "
              f"{statistics.median(ours):11.1f} {statistics.median(theirs):13.1f} "
              f"{statistics.median(ratios):6.2f} {os.getloadavg()[0]:5.2f}", flush=True)


if __name__ == "__main__":
    main()
