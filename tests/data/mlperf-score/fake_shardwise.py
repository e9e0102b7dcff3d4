#!/usr/bin/env python3
"""A stand-in for `shardwise simulate --json` in tools/score_mlperf.py's tests: it checks the
arguments and the trace the scorer builds from each fixture row (cluster, layout, format, batch,
request count and mean lengths) and prints a prediction: 1,200 tokens/s Offline; in Server, p99
TTFT 1.1 s and TPOT 90 ms at 100 requests/s, both growing in proportion to the trace's rate."""
import csv
import json
import statistics
import sys

args = sys.argv[2:]
assert sys.argv[1] == "simulate" and "--json" in args, sys.argv
value = {args[i]: args[i + 1] for i in range(len(args) - 1) if args[i].startswith("--")}
# The fixture's only covered rows: Llama2-70B FP4 on one 8-GPU B200 node, TensorRT (its engines
# under the C++ executor: trtllm-cpp), tp1 x 8.
assert value["--model"] == "llama-2-70b" and value["--cluster"] == "dgx-b200", args
assert value["--nodes"] == "1" and value["--layout"] == "dp8" and value["--engine"] == "trtllm-cpp"
assert value["--dtype"] == "fp4" and value["--kv-dtype"] == "fp8", args
assert value["--max-batch"] == "2048", args
with open(value["--trace"]) as f:
    rows = list(csv.DictReader(f))
arrivals = [float(r["arrival_s"]) for r in rows]
isl = statistics.fmean(int(r["input_tokens"]) for r in rows)
osl = statistics.fmean(int(r["output_tokens"]) for r in rows)
# Inputs scaled to the dataset mean 222.33; outputs to the runs' 293.0 (Offline) / 293.3 (Server).
assert abs(isl - 222.33) < 0.5, isl
if max(arrivals) == 0:  # Offline: the benchmark's 24,576 samples in one query
    assert len(rows) == 24576 and abs(osl - 293.0) < 0.5, (len(rows), osl)
    out = {"throughput": {"output_tokens_per_s": 1200.0}, "load": {"overloaded": False}}
else:  # Server: --server-requests 1000 Poisson arrivals, the last at 1000 / rate
    assert len(rows) == 1000 and abs(osl - 293.3) < 0.5, (len(rows), osl)
    scale = len(rows) / arrivals[-1] / 100.0  # the rate over 100 requests/s
    out = {"ttft_s": {"p50": 0.5 * scale, "p99": 1.1 * scale},
           "tpot_s": {"p50": 0.05 * scale, "p99": 0.09 * scale},
           "load": {"overloaded": scale > 3, "capacity_requests_per_s": 300.0}}
print(json.dumps(out))
