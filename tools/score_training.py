#!/usr/bin/env python3
"""Scores `shardwise train` against published training throughput.

Two kinds of rows, each a CSV in data/training/validation/:
- NVIDIA's Megatron-Core pre-training tables (nemo-pretraining-25.09-25.11.csv, copied from
  Megatron-Bridge's performance summary): tokens/s per GPU of a model on a DGX system with a
  stated layout, batch and precision. Each row runs as
  `shardwise train --layout ... --global-batch ... --micro-batch ... --schedule ... --zero ...
  --dtype ... --fp8-recipe ... --json` on the matching cluster, and is scored on tokens/s per GPU.
- Megatron-LM's SC21 Table 1 (megatron-lm-sc21-table1.csv, Narayanan et al., arXiv:2104.04473):
  TFLOP/s per A100 with full recompute (engine megatron-lm-sc21), scored on the hardware FLOPs
  per GPU the paper counts.

error = predicted / measured - 1. Prints every row, then the median |error|, the worst and how
many lie within the bound, by system, model and precision, and over all. With --max-row,
--max-median and --min-within it exits 1 when a row, the median or the count misses, or a row
cannot be expressed (a CTest runs it so). --recipes main
scores only each table row's first value (NVIDIA's parenthesised second recipe is an 'alt' row).

Usage: tools/score_training.py [--binary build/shardwise] [--table nemo|sc21|all]
       [--recipes main|all] [--engine NAME|FILE] [--bound F] [--max-row F] [--max-median F]
       [--min-within N] [--csv-dir DIR] [--markdown] [--jobs N]
Only the Python standard library is used.
"""
import argparse
import collections
import csv
import json
import os
import statistics
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

from calibrate_bands import outwards, share_within, spread  # one rule for every stated band

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CSV_DIR = os.path.join(ROOT, "data", "training", "validation")
NEMO_CSV = "nemo-pretraining-25.09-25.11.csv"
SC21_CSV = "megatron-lm-sc21-table1.csv"

# NVIDIA's model names -> the shardwise catalog (Llama 3 8B/70B share Llama 3.1's architecture)
# and the MTP modules the row trains with.
MODELS = {
    "LLAMA3_8B": ("llama-3.1-8b", 0),
    "LLAMA3_70B": ("llama-3.1-70b", 0),
    "LLAMA3.1_405B": ("llama-3.1-405b", 0),
    "DeepSeekV3": ("deepseek-v3", 0),
    "DeepSeekV3_MTP": ("deepseek-v3", 1),
    "GPT_OSS_120B": ("gpt-oss-120b", 0),
    "Qwen3_30B_a3B": ("qwen3-30b-a3b", 0),
    "Qwen3_235B_a22B": ("qwen3-235b-a22b", 0),
}
# DGX systems -> (cluster, GPUs per node or rack).
SYSTEMS = {
    "DGX-H100": ("dgx-h100", 8),
    "DGX-B200": ("dgx-b200", 8),
    "DGX-GB200": ("gb200-nvl72", 72),
    "DGX-GB300": ("gb300-nvl72", 72),
}
# Precision labels -> shardwise's --dtype and --fp8-recipe.
PRECISIONS = {
    "BF16": ("bf16", None),
    "FP8-CS": ("fp8", "current"),
    "FP8-DS": ("fp8", "delayed"),
    "FP8-MX": ("fp8", "mxfp8"),
    "FP8-BLOCK": ("fp8", "blockwise"),
}


def layout_text(dp, tp, cp, pp, ep):
    parts = [f"{name}{n}" for name, n in (("dp", dp), ("tp", tp), ("cp", cp), ("pp", pp),
                                          ("ep", ep)) if n > 1]
    return "".join(parts) or "dp1"


def nemo_command(row, engine):
    """The `shardwise train` arguments for one NeMo table row and the assumption they make (or
    None), or (None, why) if it cannot run."""
    if row["model"] not in MODELS:
        return None, f"model {row['model']} has no catalog entry"
    if row["system"] not in SYSTEMS:
        return None, f"system {row['system']} has no cluster"
    if row["precision"] not in PRECISIONS:
        return None, f"precision {row['precision']} is not modelled"
    model, mtp = MODELS[row["model"]]
    cluster, per_node = SYSTEMS[row["system"]]
    dtype, recipe = PRECISIONS[row["precision"]]
    gpus = int(row["gpus"])
    tp, pp, cp, ep = (int(row[k]) for k in ("tp", "pp", "cp", "ep"))
    dp = gpus // (tp * pp * cp)
    assumption = None
    stage = dp * tp * cp
    if ep > stage and row.get("recipe") != "main":
        # NVIDIA prints one EP for a row's two recipes; the second can use more pipeline stages
        # than the EP fits in (25.09 GB200 DeepSeek-V3 FP8-MX: PP 8 leaves 32 ranks a stage, EP
        # 64). Its EP is taken as the stage's ranks, as 25.11's GB200 FP8-MX recipe of that
        # model runs EP 32 at PP 8.
        assumption = (f"a second recipe's EP as its stage's {stage} ranks (the table prints the "
                      f"first recipe's EP {ep}, more than PP {pp} leaves a stage)")
        ep = stage
    vp = int(row["vp"] or 1)
    fsdp = int(row["fsdp"] or 0)
    nodes = -(-gpus // per_node)
    args = ["train", "--model", model, "--cluster", cluster, "--nodes", str(nodes),
            "--gpus", str(gpus), "--layout", layout_text(dp, tp, cp, pp, ep),
            "--seq-len", row["seq"], "--global-batch", row["gbs"], "--micro-batch", row["mbs"],
            "--schedule", f"interleaved:{vp}" if vp > 1 else "1f1b",
            "--zero", "3" if fsdp > 0 else "1", "--dtype", dtype, "--engine", engine,
            "--no-sizes", "--json"]
    if recipe:
        args += ["--fp8-recipe", recipe]
    if row.get("moe") == "tokendrop":
        args.append("--moe-token-drop")
    if mtp:
        args += ["--mtp-layers", str(mtp)]
    return args, assumption


def sc21_command(row):
    gpus = int(row["gpus"])
    tp, pp = int(row["tp"]), int(row["pp"])
    args = ["train", "--model", row["model"], "--cluster", "dgx-a100", "--nodes",
            str(gpus // 8), "--gpus", str(gpus),
            "--layout", layout_text(gpus // (tp * pp), tp, 1, pp, 1), "--seq-len", "2048",
            "--global-batch", row["batch"], "--engine", "megatron-lm-sc21",
            "--recompute", "full", "--zero", "0", "--no-sizes", "--json"]
    return args, None


def read_rows(csv_dir, table, recipes, engine):
    rows = []
    if table in ("nemo", "all"):
        with open(os.path.join(csv_dir, NEMO_CSV), newline="") as f:
            for r in csv.DictReader(f):
                if recipes == "main" and r["recipe"] != "main":
                    continue
                args, note = nemo_command(r, engine)
                why, assumption = (note, None) if args is None else (None, note)
                rows.append({
                    "table": f"NeMo {r['container']}", "system": r["system"],
                    "model": r["model"] + (f" ({r['moe']})" if r.get("moe") == "tokendrop" else ""),
                    "precision": r["precision"], "recipe": r["recipe"],
                    "measured": float(r["tokens_per_s_per_gpu"]), "metric": "tokens/s/GPU",
                    "key": "tokens_per_s_per_gpu", "args": args, "why": why,
                    "moe": r.get("moe", ""),
                    "assumption": assumption})
    if table in ("sc21", "all"):
        with open(os.path.join(csv_dir, SC21_CSV), newline="") as f:
            for r in csv.DictReader(f):
                args, why = sc21_command(r)
                rows.append({
                    "table": "SC21 Table 1", "system": "DGX-A100", "model": r["model"],
                    "precision": "FP16", "recipe": "main",
                    "measured": float(r["tflops_per_gpu"]) * 1e12, "metric": "FLOP/s/GPU",
                    "key": "hardware_flops_per_s_per_gpu", "args": args, "why": why})
    return rows


def run(binary, row):
    if row["args"] is None:
        return row
    p = subprocess.run([binary] + row["args"], capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        row["why"] = (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[-1]
        return row
    out = json.loads(p.stdout)
    row["predicted"] = out[row["key"]]
    row["error"] = row["predicted"] / row["measured"] - 1
    row["detail"] = f"{out['recompute']} recompute, bound by {out['bound']}"
    row["pair"] = (out["model"], out["gpu"])
    return row


def summarise(rows, bound):
    errors = [abs(r["error"]) for r in rows if "error" in r]
    if not errors:
        return "no rows scored"
    within = sum(e <= bound for e in errors)
    return (f"{len(errors)} rows, median |error| {100 * statistics.median(errors):.1f}%, "
            f"mean {100 * statistics.mean(errors):.1f}%, worst {100 * max(errors):.1f}%, "
            f"{within} within {100 * bound:.0f}%")


def print_rows(rows, markdown):
    if markdown:
        print("| table | system | model | precision | measured | predicted | error |")
        print("|---|---|---|---|---|---|---|")
    for r in rows:
        scale = 1e12 if r["metric"] == "FLOP/s/GPU" else 1
        unit = " TFLOP/s" if scale > 1 else ""
        label = r["precision"] + (" (alt)" if r["recipe"] != "main" else "") + \
            (" (assumed EP)" if r.get("assumption") else "")
        if "error" not in r:
            cells = [r["table"], r["system"], r["model"], label,
                     f"{r['measured'] / scale:,.0f}{unit}", "-", f"not expressed: {r['why']}"]
        else:
            cells = [r["table"], r["system"], r["model"], label,
                     f"{r['measured'] / scale:,.0f}{unit}", f"{r['predicted'] / scale:,.0f}{unit}",
                     f"{100 * r['error']:+.1f}%"]
        if markdown:
            print("| " + " | ".join(cells) + " |")
        else:
            print("  ".join(cells) + ("" if markdown or "detail" not in r else f"  [{r['detail']}]"))


ROUTING = {"dropless": "dropless", "tokendrop": "token-drop"}  # the table's words -> train's


def per_model(rows):
    """{model: {gpu: {"low", "high", "rows", "runs"}}}: the range of measured / predicted over each
    model's rows on each GPU, rounded outwards to two decimals (one row: to the nearest), and what
    those runs were (their precisions): what `train` states. An MoE model's dropless and token-drop
    runs are keyed apart ("qwen3-30b-a3b token-drop"), as train reads them for its own routing."""
    groups = collections.defaultdict(list)
    for r in rows:
        if "error" in r:
            model, gpu = r["pair"]
            routing = ROUTING.get(r.get("moe", ""))
            groups[(f"{model} {routing}" if routing else model, gpu)].append(r)
    table = collections.defaultdict(dict)
    for (model, gpu), group in sorted(groups.items()):
        values = [1 / (1 + r["error"]) for r in group]
        runs = ", ".join(sorted({r["precision"] for r in group}))
        if len(values) == 1:
            low = high = round(values[0], 2)
        else:
            low, high = outwards(min(values), max(values))
        table[model][gpu] = {"low": low, "high": high, "rows": len(values), "runs": runs}
    return table


def stated_per_model(engine):
    """The profile's measured_by_model value, or None where the profile states none."""
    path = engine if engine.endswith(".json") else os.path.join(ROOT, "data", "training",
                                                                 engine + ".json")
    with open(path) as f:
        field = json.load(f).get("fields", {}).get("measured_by_model")
    return None if field is None else field["value"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--binary", default=os.path.join(ROOT, "build", "shardwise"))
    ap.add_argument("--csv-dir", default=CSV_DIR)
    ap.add_argument("--engine", default="megatron-core",
                    help="engine for the NeMo rows: a built-in name or a profile .json to try")
    ap.add_argument("--table", choices=["nemo", "sc21", "all"], default="all")
    ap.add_argument("--recipes", choices=["main", "all"], default="all")
    ap.add_argument("--bound", type=float, default=0.15, help="per-row bound for the counts")
    ap.add_argument("--max-row", type=float, help="exit 1 if any row's |error| exceeds this")
    ap.add_argument("--max-median", type=float, help="exit 1 if the median |error| exceeds this")
    ap.add_argument("--min-within", type=int,
                    help="exit 1 if fewer rows than this lie within --bound")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--bands", action="store_true",
                    help="also print the 10th and 90th percentile of measured / predicted over "
                         "the rows scored (calibrate_bands.py's rule), the engine's stated spread, "
                         "and each model's range on each GPU against the profile's "
                         "measured_by_model")
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args()
    rows = read_rows(a.csv_dir, a.table, a.recipes, a.engine)
    with ThreadPoolExecutor(max_workers=a.jobs) as pool:
        rows = list(pool.map(lambda r: run(a.binary, r), rows))
    print_rows(rows, a.markdown)
    print()
    for field in ("table", "system", "model", "precision"):
        groups = collections.defaultdict(list)
        for r in rows:
            groups[r[field]].append(r)
        for name in sorted(groups):
            print(f"{field} {name}: {summarise(groups[name], a.bound)}")
    print(f"all: {summarise(rows, a.bound)}")
    assumed = collections.Counter(r["assumption"] for r in rows
                                  if r.get("assumption") and "error" in r)
    for text, n in sorted(assumed.items()):
        print(f"scored with an assumption ({n}): {text}")
    if a.bands:
        ratios = [1 / (1 + r["error"]) for r in rows if "error" in r]
        low, high = spread(ratios)
        print(f"measured / predicted over {len(ratios)} rows: 10th percentile {low:.2f}, "
              f"90th {high:.2f} (rounded outwards; {100 * share_within(ratios, (low, high)):.0f}% "
              "of the rows inside)")
        # Each table's rows against the profile that predicted them.
        for engine, kind in ((a.engine, "NeMo"), ("megatron-lm-sc21", "SC21")):
            table = per_model([r for r in rows if r["table"].startswith(kind)])
            if not table:
                continue
            stated = stated_per_model(engine)
            given = json.dumps(table, sort_keys=True)
            if stated is None:
                print(f"per model and GPU ({engine}): the profile states none; the rows give "
                      + given)
            elif stated == table:
                print(f"per model and GPU ({engine}): as the profile states (measured_by_model)")
            else:
                print(f"per model and GPU ({engine}): the profile states "
                      f"{json.dumps(stated, sort_keys=True)}; the rows give {given}")
    failed = [r for r in rows if "error" not in r]
    errors = [abs(r["error"]) for r in rows if "error" in r]
    bad = bool(failed)
    if a.max_row is not None and errors and max(errors) > a.max_row:
        bad = True
    if a.max_median is not None and errors and statistics.median(errors) > a.max_median:
        bad = True
    if a.min_within is not None and sum(e <= a.bound for e in errors) < a.min_within:
        bad = True
    if failed:
        print(f"{len(failed)} rows not expressed", file=sys.stderr)
    checked = a.max_row is not None or a.max_median is not None or a.min_within is not None
    return 1 if bad and checked else 0


if __name__ == "__main__":
    sys.exit(main())
