#!/usr/bin/env python3
"""score_serving.closed_loop_identity on one hand-made row (the numbers worked by hand below)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
import score_serving  # noqa: E402

# Measured: OSL 128, TTFT 100 ms, TPOT 10 ms -> E2E = 100 + 127 x 10 = 1,370 ms.
# Predicted: TTFT 80 ms, TPOT 11 ms -> E2E = 80 + 127 x 11 = 1,477 ms; E2E error 1,477 / 1,370 - 1
# = 0.0781022; the TPOT error alone accounts for -127 x (11 - 10) / 100 = -1.27 of TTFT; 8 clients
# at 5 requests/s cycle in 8 / 5 s = 1,600 ms, 1,600 - 1,477 = 123 ms outside TTFT and decode.
ROW = {"osl": "128", "silicon_ttft_ms": "100", "silicon_tpot_ms": "10"}
ARGV = ["shardwise", "simulate", "--concurrency", "8"]
got = score_serving.closed_loop_identity(ROW, ARGV, {"throughput": {"requests_per_s": 5.0}},
                                         80.0, 11.0)
want = {"e2e_err": 0.0781022, "ttft_err_from_tpot": -1.27, "cycle_residual_ms": 123.0}
for key, value in want.items():
    if abs(got[key] - value) > 1e-6:
        sys.exit(f"closed_loop_identity: {key} = {got[key]}, by hand {value}")
# The simulation's own mean E2E, where it states one (1.5 s): 1,500 / 1,370 - 1 = 0.0948905, and
# 1,600 - 1,500 = 100 ms of residual; the TPOT reading is unchanged.
got = score_serving.closed_loop_identity(
    ROW, ARGV, {"throughput": {"requests_per_s": 5.0}, "e2e_s": {"mean": 1.5}}, 80.0, 11.0)
want = {"e2e_err": 0.0948905, "ttft_err_from_tpot": -1.27, "cycle_residual_ms": 100.0}
for key, value in want.items():
    if abs(got[key] - value) > 1e-6:
        sys.exit(f"closed_loop_identity with a stated E2E: {key} = {got[key]}, by hand {value}")
# No throughput stated: no residual, rather than a division by zero.
got = score_serving.closed_loop_identity(ROW, ARGV, {"throughput": {"requests_per_s": 0}}, 80, 11)
if got["cycle_residual_ms"] is not None:
    sys.exit("closed_loop_identity: a residual without a throughput")
print("closed_loop_identity: by hand")
