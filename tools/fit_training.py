#!/usr/bin/env python3
"""Fits the fitted numbers of a training engine profile to the rows they are named after.

Each fit is one number of data/training/megatron-core.json and one measured row of
data/training/validation/nemo-pretraining-25.09-25.11.csv: the number is bisected until
`shardwise train` (run as tools/score_training.py runs the row) reproduces the row's tokens/s per
GPU. Fits run in order, each on the profile the earlier ones produced; every other row of the
table is a check (tools/score_training.py). Prints each fitted value; with --write, stores them
in the profile (value and provenance only: the source text names the row and stays by hand).

Usage: tools/fit_training.py [--binary build/shardwise] [--profile FILE] [--csv-dir DIR]
       [--only NAME] [--write]
Only the Python standard library is used.
"""
import argparse
import csv
import json
import math
import os
import subprocess
import sys
import tempfile

import score_training

ROOT = score_training.ROOT
PROFILE = os.path.join(ROOT, "data", "training", "megatron-core.json")

# (paths to the number in the profile (one value written to each), its bounds, the rows:
# container, system, model, precision). A number fitted on several rows makes their mean log
# error zero.
DENSE = ("LLAMA3_8B", "LLAMA3_70B", "LLAMA3.1_405B")
FITS = [
    ([("fields", "overlap_compute_cost")], (0.0, 1.0),
     [("25.11", "DGX-H100", "LLAMA3.1_405B", "FP8-CS")]),
] + [
    ([("gpus", gpu, "gemm_fraction_fp8_tensor")], (0.3, 0.95),
     [("25.11", system, model, "FP8-CS") for model in DENSE])
    for gpu, system in (("b200", "DGX-B200"), ("gb300", "DGX-GB300"))
] + [
    # The GB200 holds the B200's die: its rate is read off the runs where nothing but the GPU
    # differs, the same layout, batch and container on both (Llama 3 8B, TP 1, 8 GPUs), as the
    # ratio of their speeds; the B200's rate is fitted first. The GB200's 70B and 405B runs
    # differ from the B200's in layout and in recompute the table does not state: checks.
    ([("gpus", "gb200", "gemm_fraction_fp8_tensor")], (0.3, 0.95),
     [(("25.11", "DGX-GB200", "LLAMA3_8B", "FP8-CS"), ("25.11", "DGX-B200", "LLAMA3_8B", "FP8-CS"))]),
] + [
    # MXFP8 against per-tensor FP8 on the same dense rows: the ratio of the two recipes' speeds.
    ([("gpus", gpu, "gemm_fraction_mxfp8")], (0.3, 0.95),
     [(("25.11", system, model, "FP8-MX"), ("25.11", system, model, "FP8-CS"))
      for model in DENSE])
    for gpu, system in (("b200", "DGX-B200"), ("gb200", "DGX-GB200"), ("gb300", "DGX-GB300"))
] + [
    # The host's time per kernel where it binds: dropless MoE at one sequence per micro-batch
    # (x86 hosts of DGX H100 and B200), and at four on Grace (GB200, GB300).
    ([("gpus", "b200", "host_s_per_kernel"), ("gpus", "h100-sxm", "host_s_per_kernel")],
     (1e-6, 2e-4), [("25.11", "DGX-B200", "Qwen3_30B_a3B", "FP8-MX")]),
    ([("gpus", "gb200", "host_s_per_kernel"), ("gpus", "gb300", "host_s_per_kernel")],
     (1e-6, 2e-4), [("25.11", system, "Qwen3_30B_a3B", "FP8-MX")
                    for system in ("DGX-GB200", "DGX-GB300")]),
]
# Numbers whose higher values make a run slower.
SLOWER = ("overlap_compute_cost", "host_s_per_kernel")


def find_rows(csv_dir, keys):
    """The table's rows (or pairs of rows) with these keys; keys the table lacks are skipped."""
    path = os.path.join(csv_dir, score_training.NEMO_CSV)
    with open(path, newline="") as f:
        table = {(r["container"], r["system"], r["model"], r["precision"]): r
                 for r in csv.DictReader(f)}
    rows = []
    for key in keys:
        if isinstance(key[0], tuple):
            if all(k in table for k in key):
                rows.append(tuple(table[k] for k in key))
        elif key in table:
            rows.append(table[key])
    if not rows:
        sys.exit(f"no rows {keys} in {path}")
    return rows


def log_error(binary, profile_path, row):
    """log(predicted / measured) of a row, or of a pair's ratio against the measured ratio."""
    if isinstance(row, tuple):
        return log_error(binary, profile_path, row[0]) - log_error(binary, profile_path, row[1])
    got = predict(binary, profile_path, row)
    return math.log(got / float(row["tokens_per_s_per_gpu"])) if got else -9


def predict(binary, profile, row):
    args, why = score_training.nemo_command(row, profile)
    if args is None:
        sys.exit(f"row cannot run: {why}")
    p = subprocess.run([binary] + args, capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        return None
    return json.loads(p.stdout)["tokens_per_s_per_gpu"]


def entries(profile, paths):
    out = []
    for path in paths:
        entry = profile
        for key in path:
            entry = entry[key]
        out.append(entry)
    return out


def fit_one(binary, profile, paths, bounds, rows):
    """Bisects the number at `paths` until the rows' mean log error is zero."""
    sign = -1 if paths[0][-1] in SLOWER else 1
    lo, hi = bounds
    for _ in range(30):
        mid = (lo + hi) / 2
        for entry in entries(profile, paths):
            entry["value"] = mid
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump(profile, f)
        errors = [log_error(binary, f.name, row) for row in rows]
        os.unlink(f.name)
        faster = sum(errors) > 0
        if (faster and sign > 0) or (not faster and sign < 0):
            hi = mid
        else:
            lo = mid
    return float(f"{(lo + hi) / 2:.4g}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--binary", default=os.path.join(ROOT, "build", "shardwise"))
    ap.add_argument("--profile", default=PROFILE, help="the engine profile to fit")
    ap.add_argument("--csv-dir", default=score_training.CSV_DIR)
    ap.add_argument("--only", help="fit only the number whose path ends in this name")
    ap.add_argument("--write", action="store_true", help="store the fitted values in the profile")
    a = ap.parse_args()
    with open(a.profile) as f:
        profile = json.load(f)
    for paths, bounds, keys in FITS:
        if a.only and paths[0][-1] != a.only:
            continue
        rows = find_rows(a.csv_dir, keys)
        value = fit_one(a.binary, profile, paths, bounds, rows)
        for entry in entries(profile, paths):
            entry["value"] = value
            entry["provenance"] = "fitted"
        names = "; ".join(" / ".join(" ".join((r["container"], r["system"], r["model"],
                                                 r["precision"]))
                                       for r in (row if isinstance(row, tuple) else (row,)))
                          for row in rows)
        print(f"{', '.join('.'.join(p) for p in paths)} = {value}  (rows {names})")
    if a.write:
        with open(a.profile, "w") as f:
            json.dump(profile, f, indent=2)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
