#!/usr/bin/env python3
"""A stand-in for shardwise in tools/fit_gpu_mlperf.py's test. `clusters --show mi325x-8` prints a
cluster naming its GPU; `simulate --json` takes a cluster file with the GPU written inline and
predicts 2,000 x its fp8 GEMM fraction output tokens/s, after checking the row's arguments
(Llama2-70B FP8 on one 8-GPU node, vLLM, no layout: simulate's own) and its Offline trace."""
import csv
import json
import sys

if sys.argv[1:] == ["clusters", "--show", "mi325x-8"]:
    print(json.dumps({"name": "mi325x-8", "gpu": "mi325x", "levels": []}))
    sys.exit(0)
args = sys.argv[2:]
assert sys.argv[1] == "simulate" and "--json" in args, sys.argv
value = {args[i]: args[i + 1] for i in range(len(args) - 1) if args[i].startswith("--")}
assert value["--model"] == "llama-2-70b" and value["--nodes"] == "1", args
assert value["--dtype"] == "fp8" and value["--engine"].startswith("vllm"), args
assert "--layout" not in value, args
with open(value["--cluster"]) as f:
    cluster = json.load(f)
assert cluster["name"] == "mi325x-8", cluster
with open(value["--trace"]) as f:
    rows = list(csv.DictReader(f))
assert len(rows) == 24576 and all(float(r["arrival_s"]) == 0 for r in rows), len(rows)
fraction = cluster["gpu"]["achievable"]["gemm_fraction"]["fp8"]
print(json.dumps({"throughput": {"output_tokens_per_s": 2000.0 * fraction},
                  "load": {"overloaded": False}}))
