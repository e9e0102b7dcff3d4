#!/usr/bin/env python3
"""mlperf_traces' Offline sample count on hand-worked rows."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
import mlperf_traces  # noqa: E402


def check(what, got, want):
    if got != want:
        sys.exit(f"{what}: {got}, by hand {want}")


R1 = mlperf_traces.LENGTHS["deepseek-r1"]  # 4,388 samples a pass
# target_qps 10: 10 x 600 s x 1.1 = 6,600 samples, two passes: 8,776.
check("target_qps alone", mlperf_traces.offline_requests(R1, "10", 150000), 8776)
# NVIDIA's GB200 DeepSeek-R1 row: 289,712 tokens/s at 3,662.5 tokens a sample is 79.10
# samples/s; a valid run lasted 600 s, so it issued at least 47,461 samples: 11 passes, 48,268.
check("a valid run's duration", mlperf_traces.offline_requests(R1, "10", 150000, 289712 / 3662.5),
      48268)
# ...as write_row_trace reads it off the row, and at most --offline-requests.
row = {"model": "deepseek-r1", "scenario": "Offline", "target_qps": "10", "tokps": "289712.0"}
path = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"mlperf_traces_test_{os.getpid()}.csv")
check("the row's trace", mlperf_traces.write_row_trace(row, path), 48268)
os.remove(path)
check("capped", mlperf_traces.offline_requests(R1, "10", 20000, 79.1), 20000)
# A measured rate whose 600 s fit in the target's samples changes nothing: 3 samples/s x 600 =
# 1,800 < 8,776.
check("rate under the target", mlperf_traces.offline_requests(R1, "10", 150000, 3.0), 8776)
# Server: LoadGen issues queries for 600 s in whole dataset passes. DeepSeek-R1 at 3.8
# queries/s: 2,280 < 4,388, one pass; at 27.5: 16,500 queries, four passes of 4,388 = 17,552;
# at most --server-requests.
check("one Server pass", mlperf_traces.server_requests(R1, "3.8", 20000), 4388)
check("Server passes for 600 s", mlperf_traces.server_requests(R1, 27.5, 20000), 17552)
check("Server capped", mlperf_traces.server_requests(R1, 27.5, 6000), 6000)
print("mlperf_traces: ok")
