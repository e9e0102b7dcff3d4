#!/usr/bin/env python3
"""A stand-in for shardwise in tools/fit_gpu_mlperf.py's tests. `clusters --show mi300x-8`,
`mi325x-8` or `dgx-b200` prints a cluster naming its GPU; `simulate --json` takes a cluster file
with that GPU written inline and, after checking the row's arguments (Llama2-70B on one 8-GPU
node: AMD's FP8 on vLLM with simulate's own layout, the B200's FP4 on TensorRT engines, trtllm-cpp,
tp1 x 8) and its trace, predicts from the GPU's GEMM fraction f (fp8, or fp4 on the B200) and
kernel latency L: 2,000 x f x (1 - 10,000 x L) output tokens/s Offline (LoadGen's 24,576 samples
at time 0; 2,000 x f on the B200), and a TPOT p50 of 2,000 x L under Poisson arrivals (20,000
requests: LoadGen's 600 s at the rows' rates exceed one 24,576-sample pass, capped)."""
import csv
import json
import sys

CLUSTER_GPU = {"mi300x-8": "mi300x", "mi325x-8": "mi325x", "dgx-b200": "b200"}
if sys.argv[1:3] == ["clusters", "--show"] and sys.argv[3] in CLUSTER_GPU:
    print(json.dumps({"name": sys.argv[3], "gpu": CLUSTER_GPU[sys.argv[3]], "levels": []}))
    sys.exit(0)
args = sys.argv[2:]
assert sys.argv[1] == "simulate" and "--json" in args, sys.argv
value = {args[i]: args[i + 1] for i in range(len(args) - 1) if args[i].startswith("--")}
assert value["--model"] == "llama-2-70b" and value["--nodes"] == "1", args
with open(value["--cluster"]) as f:
    cluster = json.load(f)
assert CLUSTER_GPU[cluster["name"]] == cluster["gpu"]["name"], cluster
b200 = cluster["gpu"]["name"] == "b200"
if b200:
    assert value["--dtype"] == "fp4" and value["--engine"] == "trtllm-cpp", args
    assert value["--layout"] == "dp8", args
else:
    assert value["--dtype"] == "fp8" and value["--engine"].startswith("vllm"), args
    assert "--layout" not in value, args
achievable = cluster["gpu"]["achievable"]
f = achievable["gemm_fraction"]["fp4" if b200 else "fp8"]
latency = 0 if b200 else achievable["kernel_latency_s"]
with open(value["--trace"]) as t:
    rows = list(csv.DictReader(t))
if all(float(r["arrival_s"]) == 0 for r in rows):
    assert len(rows) == 24576, len(rows)
    out = {"throughput": {"output_tokens_per_s": 2000.0 * f * (1 - 1e4 * latency)}}
else:
    assert len(rows) == 20000, len(rows)
    out = {"tpot_s": {"p50": 2000.0 * latency}}
out["load"] = {"overloaded": False}
print(json.dumps(out))
