#!/usr/bin/env python3
"""Fits a GPU's achieved FP8 GEMM fraction to its public MLPerf Inference v5.1 Offline rows.

Each fit is one number of a GPU catalog file, data/gpus/<gpu>.json's
achievable.gemm_fraction.fp8, and the Offline rows of one benchmark on that accelerator in
data/validation/mlperf-v5.1-llm.csv: the number is bisected until `shardwise simulate`, run
as tools/score_mlperf.py runs each row (the same trace of LoadGen's samples), makes the rows'
mean log error of output tokens/s zero. Offline runs the largest batches the engine holds, so
its throughput is bound by the GEMMs; every other row of the accelerator (other benchmarks,
Server and Interactive) is a check (tools/score_mlperf.py). The fraction is tried through a
cluster file with the GPU written inline (the catalog cluster's levels, the GPU's file with the
one number changed), so the catalog is not touched until --write, which stores the value and
marks gemm_fraction fitted (the source text stays by hand).

Usage: tools/fit_gpu_mlperf.py [--binary build/shardwise] [--only GPU] [--write]
Only the Python standard library is used.
"""
import argparse
import csv
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile

import score_mlperf as mlperf

ROOT = mlperf.ROOT
GPUS_DIR = os.path.join(ROOT, "data", "gpus")

# (catalog GPU, MLPerf accelerator label, benchmark whose Offline rows fit it). AMD's
# submissions run vLLM on ROCm with FP8 weights and no published layout, as the scorer runs them.
FITS = [
    ("mi300x", "MI300X", "llama2-70b-99"),
    ("mi325x", "MI325X", "llama2-70b-99"),
]
BOUNDS = (0.2, 0.95)
TOLERANCE = 0.001  # of the fraction


def fit_rows(label, benchmark, csv_path):
    rows = [r for r in mlperf.dedupe(list(csv.DictReader(open(csv_path))))
            if r["scenario"] == "Offline" and r["model"] == benchmark and
            mlperf.accelerator_label(r["accelerator"]) == label]
    return [r for r in rows if mlperf.row_command(r, "shardwise", "t.csv")[0] is not None]


def cluster_with(gpu, fraction, binary, path):
    """Writes the GPU's catalog cluster with the GPU inline, its fp8 GEMM fraction set."""
    with open(os.path.join(GPUS_DIR, gpu + ".json")) as f:
        spec = json.load(f)
    spec["achievable"]["gemm_fraction"]["fp8"] = fraction
    shown = subprocess.run([binary, "clusters", "--show", gpu + "-8"], capture_output=True,
                           text=True, check=True)
    cluster = json.loads(shown.stdout)
    cluster["gpu"] = spec
    with open(path, "w") as f:
        json.dump(cluster, f)


def mean_log_error(rows, gpu, fraction, binary, tmp):
    cluster = os.path.join(tmp, "cluster.json")
    cluster_with(gpu, fraction, binary, cluster)
    logs = []
    for i, r in enumerate(rows):
        trace = os.path.join(tmp, f"trace{i}.csv")
        model = mlperf.MODELS[r["model"]]
        spec = mlperf.LENGTHS[model]
        mlperf.write_trace(trace, model, "Offline", None,
                           mlperf.offline_requests(spec, r["target_qps"], 150000), 1)
        argv, _ = mlperf.row_command(r, binary, trace)
        argv[argv.index("--cluster") + 1] = cluster
        out, err = mlperf.run(argv)
        if out is None:
            sys.exit(f"fit_gpu_mlperf: {r['id']} {r['system']}: {err}")
        logs.append(math.log(out["throughput"]["output_tokens_per_s"] /
                             mlperf.measured_result(r)))
    return statistics.mean(logs)


def fit(gpu, rows, binary):
    """The fraction at which the rows' mean log error is zero (throughput rises with it)."""
    lo, hi = BOUNDS
    with tempfile.TemporaryDirectory() as tmp:
        if mean_log_error(rows, gpu, hi, binary, tmp) < 0:
            sys.exit(f"fit_gpu_mlperf: {gpu}: under-predicted even at {hi}")
        if mean_log_error(rows, gpu, lo, binary, tmp) > 0:
            sys.exit(f"fit_gpu_mlperf: {gpu}: over-predicted even at {lo}")
        while hi - lo > TOLERANCE:
            mid = (lo + hi) / 2
            if mean_log_error(rows, gpu, mid, binary, tmp) > 0:
                hi = mid
            else:
                lo = mid
    return round((lo + hi) / 2, 3)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", default=os.path.join(ROOT, "build", "shardwise"))
    ap.add_argument("--csv", default=mlperf.DEFAULT_CSV)
    ap.add_argument("--only", help="fit one GPU (mi300x, mi325x)")
    ap.add_argument("--write", action="store_true",
                    help="store the fitted values in data/gpus/ (value and provenance)")
    args = ap.parse_args()
    fits = [f for f in FITS if not args.only or f[0] == args.only]
    if not fits:
        sys.exit(f"fit_gpu_mlperf: --only {args.only}: not one of "
                 f"{', '.join(f[0] for f in FITS)}")
    for gpu, label, benchmark in fits:
        rows = fit_rows(label, benchmark, args.csv)
        if not rows:
            sys.exit(f"fit_gpu_mlperf: no {label} {benchmark} Offline rows in {args.csv}")
        value = fit(gpu, rows, args.binary)
        names = ", ".join(f"{r['id']} {r['submitter']}" for r in rows)
        print(f"{gpu}: achievable.gemm_fraction.fp8 = {value} on {len(rows)} {label} "
              f"{benchmark} Offline rows ({names})")
        if args.write:
            path = os.path.join(GPUS_DIR, gpu + ".json")
            with open(path) as f:
                spec = json.load(f)
            spec["achievable"]["gemm_fraction"]["fp8"] = value
            spec.setdefault("provenance", {})["gemm_fraction"] = "fitted"
            with open(path, "w") as f:
                json.dump(spec, f, indent=2)
                f.write("\n")


if __name__ == "__main__":
    main()
