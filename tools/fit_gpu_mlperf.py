#!/usr/bin/env python3
"""Fits GPU catalog numbers to public MLPerf Inference v5.1 rows (data/validation/
mlperf-v5.1-llm.csv) where no kernel measurement of the part is published.

Each fit is one number of data/gpus/<gpu>.json (written to every GPU it names) and the rows of
one benchmark and scenario on one accelerator: the number is bisected until `shardwise
simulate`, run as tools/score_mlperf.py runs each row (the same trace), makes the rows' mean log
error of one metric zero. Fits run in order, each on the numbers the earlier ones produced, and
repeat until no number moves by more than its tolerance; every other row is a check
(tools/score_mlperf.py). A value is tried through a cluster file with the GPU written inline (the
catalog cluster's levels, the GPU's file with the numbers changed), so the catalog is not touched
until --write, which stores the values and marks them fitted (the fp8 fraction under its own
provenance key, "gemm_fraction.fp8"), sets each bf16 fraction from its fitted fp8 one, and leaves
the source texts to be updated by hand.

- achievable.gemm_fraction.fp8 on Llama2-70B Offline output tokens/s, per part: Offline holds the
  largest batches the engine admits, so its throughput is bound by the GEMMs.
- achievable.kernel_latency_s on MI325X Llama2-70B Interactive TPOT p50 at the row's target_qps,
  written to both parts (one die, one ROCm): at Interactive's moderate batch a decode step is
  its weight read and a fixed time per kernel; the MI300X rows check it.
- achievable.gemm_fraction.fp4 of the B200 on its Llama2-70B Offline output tokens/s, the rows
  run on TensorRT engines (the trtllm-cpp profile). Written with it, as assumptions: the B300
  (Blackwell Ultra, the same kernels on wider FP4 units) the same fraction of its own peak; the
  GB200 and GB300, the B200's and B300's dies on another board, the same sustained rate as
  those (that part's fraction x its fp4 peak / their own; the training tables' GB200/B200 pairs
  of one layout measure 0.93-1.05x, docs/validation/training.md). Their rows, and the B200's
  other benchmarks, check it.

Usage: tools/fit_gpu_mlperf.py [--binary build/shardwise] [--csv FILE] [--gpus-dir DIR]
       [--only NAME] [--write]
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
from mlperf_traces import MODELS

ROOT = mlperf.ROOT
GPUS_DIR = os.path.join(ROOT, "data", "gpus")

# Each fit: its name, the GPUs its value is written to, the number's path in their files, its
# bounds and tolerance, the rows (the GPU whose cluster runs them, the accelerator as the CSV's
# label, benchmark, scenario), the metric, and the provenance key --write marks fitted (the fp8
# GEMM fraction's own, "gemm_fraction.fp8": the file's "gemm_fraction" covers bf16 too).
# AMD's submissions run vLLM on ROCm with FP8 weights and no published layout, as the scorer
# runs them.
GEMM_FP8 = ("achievable", "gemm_fraction", "fp8")
GEMM_FP4 = ("achievable", "gemm_fraction", "fp4")
KERNEL_LATENCY = ("achievable", "kernel_latency_s")
FITS = [
    {"name": f"{gpu}.gemm_fraction.fp8", "gpus": [gpu], "path": GEMM_FP8, "bounds": (0.2, 0.95),
     "tolerance": 0.001, "rows": (gpu, label, "llama2-70b-99", "Offline"),
     "metric": "tokens_per_s", "provenance": "gemm_fraction.fp8"}
    for gpu, label in (("mi300x", "MI300X"), ("mi325x", "MI325X"))
] + [
    {"name": "kernel_latency_s", "gpus": ["mi300x", "mi325x"], "path": KERNEL_LATENCY,
     "bounds": (1e-6, 1e-4), "tolerance": 1e-7,
     "rows": ("mi325x", "MI325X", "llama2-70b-99", "Interactive"), "metric": "tpot_p50_ms",
     "provenance": "kernel_latency_s"},
    {"name": "b200.gemm_fraction.fp4", "gpus": ["b200"], "path": GEMM_FP4, "bounds": (0.2, 0.95),
     "tolerance": 0.001, "rows": ("b200", "B200", "llama2-70b-99", "Offline"),
     "metric": "tokens_per_s", "provenance": "gemm_fraction.fp4",
     "same_fraction": ["b300"], "same_rate": [("gb200", "b200"), ("gb300", "b300")]},
]
MOST_ROUNDS = 6


def bf16_from_fp8(spec):
    """The bf16 GEMM fraction a part with a fitted fp8 one is given (assumed, no bf16 row): its
    fp8 achieved rate over the H100 SXM's measured ratio of fp8 to bf16 achieved rates, so a part
    slower than its peak in fp8 is slower in bf16 alike and fp8 stays the faster format."""
    h100 = read_gpu("h100-sxm")

    def achieved(gpu, dtype):
        return gpu["achievable"]["gemm_fraction"][dtype] * gpu["peak_flops_per_s"][dtype]

    ratio = achieved(h100, "fp8") / achieved(h100, "bf16")
    return round(achieved(spec, "fp8") / ratio / spec["peak_flops_per_s"]["bf16"], 3)


def fit_rows(selector, csv_path):
    """The rows a fit runs on: the scenario of the benchmark's catalog model on the
    accelerator, each measurement once, that the scorer can express."""
    _, label, benchmark, scenario = selector
    try:
        with open(csv_path, newline="") as f:
            table = list(csv.DictReader(f))
        rows = [r for r in mlperf.dedupe(table)
                if r["scenario"] == scenario and
                MODELS.get(r["model"]) == MODELS[benchmark] and
                mlperf.accelerator_label(r["accelerator"]) == label]
    except OSError as e:
        sys.exit(f"fit_gpu_mlperf: cannot read {csv_path}: {e.strerror} (--csv)")
    except KeyError as e:
        sys.exit(f"fit_gpu_mlperf: {csv_path}: no column {e}; MLPerf rows as "
                 "data/validation/mlperf-v5.1-llm.csv writes them are needed (--csv)")
    return [r for r in rows if mlperf.row_command(r, "shardwise", "t.csv")[0] is not None]


def read_gpu(gpu):
    try:
        with open(os.path.join(GPUS_DIR, gpu + ".json")) as f:
            return json.load(f)
    except OSError as e:
        sys.exit(f"fit_gpu_mlperf: cannot read {gpu}.json in {GPUS_DIR}: {e.strerror} "
                 "(--gpus-dir)")


def write_gpu(spec):
    with open(os.path.join(GPUS_DIR, spec["name"] + ".json"), "w") as f:
        json.dump(spec, f, indent=2, ensure_ascii=False)
        f.write("\n")


def derived_values(fit, value):
    """[(part, share, why)] of the parts a fit's value is assumed for: `same_fraction`, the fitted
    fraction of their own peak (one architecture and its kernels), then `same_rate`, (part,
    reference) pairs, the reference's sustained rate (at the fitted or assumed fraction) as a
    fraction of the part's own peak (one die)."""
    dtype = fit["path"][-1]
    fractions = {gpu: value for gpu in fit["gpus"] + fit.get("same_fraction", [])}
    out = [(gpu, value, "the same fraction of its peak") for gpu in fit.get("same_fraction", [])]
    for gpu, reference in fit.get("same_rate", []):
        ref = read_gpu(reference)
        rate = fractions.get(reference, get_path(ref, fit["path"])) * ref["peak_flops_per_s"][dtype]
        share = round(rate / read_gpu(gpu)["peak_flops_per_s"][dtype], 3)
        out.append((gpu, share, f"{reference}'s sustained rate"))
    return out


def write_assumed(gpu, fit, share):
    spec = read_gpu(gpu)
    set_path(spec, fit["path"], share)
    spec.setdefault("provenance", {})[fit["provenance"]] = "assumed"
    write_gpu(spec)


def set_path(spec, path, value):
    for key in path[:-1]:
        spec = spec[key]
    spec[path[-1]] = value


def get_path(spec, path):
    for key in path:
        spec = spec[key]
    return spec


def run_json(argv):
    """`argv`'s JSON output (run as the scorer runs it), or exit with one line naming what
    failed."""
    what = " ".join(argv[1:3])
    try:
        out, err = mlperf.run(argv)
    except OSError as e:
        sys.exit(f"fit_gpu_mlperf: cannot run {argv[0]}: {e.strerror} (--binary)")
    except subprocess.TimeoutExpired:
        sys.exit(f"fit_gpu_mlperf: {what} ran over 300 s")
    except json.JSONDecodeError:
        sys.exit(f"fit_gpu_mlperf: {what} printed no JSON; is {argv[0]} shardwise? (--binary)")
    if out is None:
        sys.exit(f"fit_gpu_mlperf: {what}: {err}")
    return out


def mean_log_error(rows, metric, spec, binary, tmp, clusters):
    """The rows' mean log(predicted / measured) with the GPU `spec` inline in the cluster each
    row runs on (`clusters` caches the catalog's clusters by name), each row on its trace in
    `tmp` (trace<i>.csv, written once per fit)."""
    logs = []
    for i, r in enumerate(rows):
        argv, _ = mlperf.row_command(r, binary, os.path.join(tmp, f"trace{i}.csv"))
        at = argv.index("--cluster") + 1
        if argv[at] not in clusters:
            clusters[argv[at]] = run_json([binary, "clusters", "--show", argv[at]])
        cluster = dict(clusters[argv[at]], gpu=spec)
        argv[at] = os.path.join(tmp, "cluster.json")
        with open(argv[at], "w") as f:
            json.dump(cluster, f)
        out = run_json(argv)
        if metric == "tokens_per_s":
            logs.append(math.log(out["throughput"]["output_tokens_per_s"] /
                                 mlperf.measured_result(r)))
        else:
            logs.append(math.log(out["tpot_s"]["p50"] * 1e3 / float(r["tpot_p50_ms"])))
    return statistics.mean(logs)


def fit_one(fit, rows, values, binary):
    """The value of one fit's number at which its rows' mean log error is zero, the other
    numbers at `values`."""
    path, (lo, hi) = fit["path"], fit["bounds"]
    spec = read_gpu(fit["rows"][0])
    for (gpu, other), value in values.items():
        if gpu == spec["name"]:
            set_path(spec, other, value)

    clusters = {}

    def error(x):
        set_path(spec, path, x)
        return mean_log_error(rows, fit["metric"], spec, binary, tmp, clusters)

    with tempfile.TemporaryDirectory() as tmp:
        for i, r in enumerate(rows):
            mlperf.write_row_trace(r, os.path.join(tmp, f"trace{i}.csv"))
        at_lo, at_hi = error(lo), error(hi)
        if (at_lo > 0) == (at_hi > 0):
            sys.exit(f"fit_gpu_mlperf: {fit['name']}: the error keeps one sign from {lo} to {hi}")
        rising = at_hi > 0
        while hi - lo > fit["tolerance"]:
            mid = (lo + hi) / 2
            if (error(mid) > 0) == rising:
                hi = mid
            else:
                lo = mid
    return (lo + hi) / 2


def main():
    global GPUS_DIR
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", default=os.path.join(ROOT, "build", "shardwise"))
    ap.add_argument("--csv", default=mlperf.DEFAULT_CSV)
    ap.add_argument("--gpus-dir", default=GPUS_DIR,
                    help="the GPU files read and, with --write, written (default: %(default)s)")
    ap.add_argument("--only", help="run one fit, the others held at the catalog's values (" +
                    ", ".join(f["name"] for f in FITS) + ")")
    ap.add_argument("--write", action="store_true",
                    help="store the fitted values in data/gpus/ (value and provenance)")
    args = ap.parse_args()
    GPUS_DIR = args.gpus_dir
    fits = [f for f in FITS if not args.only or f["name"] == args.only]
    if not fits:
        sys.exit(f"fit_gpu_mlperf: --only {args.only}: not one of "
                 f"{', '.join(f['name'] for f in FITS)}")
    rows = {}
    for fit in fits:
        rows[fit["name"]] = fit_rows(fit["rows"], args.csv)
        if not rows[fit["name"]]:
            sys.exit(f"fit_gpu_mlperf: {fit['name']}: no {' '.join(fit['rows'][1:])} rows in "
                     f"{args.csv}")
    values = {(gpu, fit["path"]): get_path(read_gpu(gpu), fit["path"])
              for fit in fits for gpu in fit["gpus"]}
    for _ in range(MOST_ROUNDS if len(fits) > 1 else 1):
        moved = False
        for fit in fits:
            value = fit_one(fit, rows[fit["name"]], values, args.binary)
            moved |= any(abs(values[(gpu, fit["path"])] - value) > fit["tolerance"]
                         for gpu in fit["gpus"])
            values.update({(gpu, fit["path"]): value for gpu in fit["gpus"]})
        if not moved:
            break
    else:
        if len(fits) > 1:
            sys.exit(f"fit_gpu_mlperf: the fits still moved after {MOST_ROUNDS} rounds; "
                     "nothing written")
    for fit in fits:
        value = float(f"{values[(fit['gpus'][0], fit['path'])]:.3g}")
        names = ", ".join(f"{r['id']} {r['submitter']}" for r in rows[fit["name"]])
        print(f"{fit['name']} = {value:g} on {len(rows[fit['name']])} "
              f"{' '.join(fit['rows'][1:])} rows ({names}); for {', '.join(fit['gpus'])}")
        derived = derived_values(fit, value)
        for gpu, share, why in derived:
            print(f"{gpu}.gemm_fraction.{fit['path'][-1]} = {share:g} (assumed, {why})")
        if args.write:
            for gpu, share, _ in derived:
                write_assumed(gpu, fit, share)
            for gpu in fit["gpus"]:
                spec = read_gpu(gpu)
                set_path(spec, fit["path"], value)
                spec.setdefault("provenance", {})[fit["provenance"]] = "fitted"
                if fit["path"] == GEMM_FP8:
                    spec["achievable"]["gemm_fraction"]["bf16"] = bf16_from_fp8(spec)
                    print(f"{gpu}.gemm_fraction.bf16 = "
                          f"{spec['achievable']['gemm_fraction']['bf16']:g} (assumed, from fp8)")
                write_gpu(spec)
    print(f"written to {GPUS_DIR}; update the files' source texts, which quote the values"
          if args.write else f"pass --write to store them in {GPUS_DIR}")


if __name__ == "__main__":
    main()
