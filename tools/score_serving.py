#!/usr/bin/env python3
"""Scores shardwise against measured serving points (data/validation/serving-h100.csv).

For every aggregated row whose model and layout shardwise can express, runs
`shardwise simulate --concurrency C` (a closed loop of C clients, as the benchmark that produced
the row) with the row's engine, format, layout and lengths, and compares the simulated mean TTFT
and TPOT with the measured ones. Prints coverage (and why rows are not expressible) and the
median / p90 |error| by engine, model and layout kind. Disaggregated rows are reported as not
expressible until shardwise models disaggregated deployments; `row_command` is the one place to
extend for them.

Usage: tools/score_serving.py [--binary build/shardwise] [--csv FILE] [--markdown] [--limit N]
       [--every K] [--max-tpot-median F --max-ttft-median F]
With the bounds, exits 1 if any engine's median |error| exceeds them (the CTest
ServingValidation.ErrorBoundsPerEngine runs this on every 8th row). Only the Python standard
library is used.
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

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Hugging Face repository -> shardwise catalog model (None: the catalog cannot read it yet).
MODELS = {
    "Qwen/Qwen3-32B": "qwen3-32b",
    "meta-llama/Llama-3.1-8B-Instruct": "llama-3.1-8b",
    "meta-llama/Llama-3.1-70B": "llama-3.1-70b",
    "Qwen/Qwen3-235B-A22B-FP8": "qwen3-235b-a22b",
    "openai/gpt-oss-120b": "gpt-oss-120b",
    "deepseek-ai/DeepSeek-R1": "deepseek-r1",
    "deepseek-ai/DeepSeek-V3": "deepseek-v3",
}
UNREADABLE = {
    "MiniMaxAI/MiniMax-M2.5": "MiniMaxM2ForCausalLM is not an architecture the catalog reads yet",
}
MOE = {"qwen3-235b-a22b", "gpt-oss-120b", "deepseek-r1", "deepseek-v3"}


def to_int(text, default=1):
    return int(text) if text not in ("", None) else default


def weight_format(row):
    """The weight format shardwise computes with, and the KV format the engine serves."""
    p = row["precision"]
    if p == "fp8":
        return "fp8", "fp8"
    if p == "fp4":
        # gpt-oss ships MXFP4 MoE weights (the row's 'nvfp4' label is the dump's); on Hopper the
        # engines dequantise them to bf16 (no FP4 tensor cores). FP4 checkpoints serve fp8 KV.
        return "mxfp4", "fp8"
    return "bf16", "bf16"


def layout_of(row, model):
    tp = to_int(row["tp_size"])
    pp = to_int(row["pp_size"])
    adp = to_int(row["attention_dp_size"])
    if model not in MOE:
        return f"tp{tp}" + (f"pp{pp}" if pp > 1 else ""), tp * pp
    ep = to_int(row["moe_ep_size"], 1) or 1
    text = (f"dp{adp}" if adp > 1 else "") + f"tp{tp}" + (f"ep{ep}" if ep > 1 else "")
    return text + (f"pp{pp}" if pp > 1 else ""), tp * pp * adp


def row_command(row, binary):
    """(argv, None) for an expressible row, or (None, why not)."""
    if row["mode"] != "agg":
        return None, "disaggregated deployment: not expressible yet"
    hf = row["model_path"]
    if hf in UNREADABLE:
        return None, UNREADABLE[hf]
    model = MODELS.get(hf)
    if model is None:
        return None, f"model {hf} not in the catalog"
    layout, gpus = layout_of(row, model)
    dtype, kv = weight_format(row)
    adp = to_int(row["attention_dp_size"])
    concurrency = to_int(row["batch_size"]) * adp
    requests = max(10 * concurrency, 100)
    argv = [binary, "simulate", "--model", model, "--cluster", "dgx-h100", "--gpus", str(gpus),
            "--layout", layout, "--engine", row["backend"], "--dtype", dtype, "--kv-dtype", kv,
            "--isl", row["isl"], "--osl", row["osl"], "--concurrency", str(concurrency),
            "--requests", str(requests), "--json"]
    return argv, None


def layout_kind(row):
    model = MODELS.get(row["model_path"], "")
    if model not in MOE:
        return "dense tp"
    return "moe attention-dp" if to_int(row["attention_dp_size"]) > 1 else "moe tp+ep"


def dedupe(rows):
    """Some rows repeat another row's measurement exactly: count each measurement once."""
    seen, out = set(), []
    for r in rows:
        key = (r["backend"], r["model_path"], r["mode"], r["isl"], r["osl"], r["batch_size"],
               r["tp_size"], r["attention_dp_size"], r["silicon_ttft_ms"], r["silicon_tpot_ms"])
        if key not in seen:
            seen.add(key)
            out.append(r)
    return out


def run(argv):
    p = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        return None, p.stderr.strip().splitlines()[-1] if p.stderr.strip() else "failed"
    return json.loads(p.stdout), None


def summary(errors):
    a = sorted(abs(e) for e in errors)
    if not a:
        return "-", "-"
    p90 = a[min(len(a) - 1, int(round(0.9 * (len(a) - 1))))]
    return f"{100 * statistics.median(a):.1f}%", f"{100 * p90:.1f}%"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--binary", default=os.path.join(ROOT, "build", "shardwise"))
    ap.add_argument("--csv", default=os.path.join(ROOT, "data", "validation", "serving-h100.csv"))
    ap.add_argument("--markdown", action="store_true", help="print Markdown tables")
    ap.add_argument("--limit", type=int, default=0, help="score only the first N rows")
    ap.add_argument("--every", type=int, default=1, help="score every K-th distinct row")
    ap.add_argument("--max-tpot-median", type=float,
                    help="fail if an engine's TPOT median |error| exceeds this fraction")
    ap.add_argument("--max-ttft-median", type=float,
                    help="fail if an engine's TTFT median |error| exceeds this fraction")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--details", help="write per-row results to this CSV")
    args = ap.parse_args()
    if not os.path.exists(args.binary):
        sys.exit(f"score_serving: no shardwise binary at {args.binary}; build it or pass --binary")
    rows = dedupe(list(csv.DictReader(open(args.csv))))
    if args.limit:
        rows = rows[: args.limit]
    rows = rows[:: max(1, args.every)]
    jobs, skipped = [], collections.Counter()
    for r in rows:
        argv, why = row_command(r, args.binary)
        if argv is None:
            skipped[why] += 1
        else:
            jobs.append((r, argv))
    with ThreadPoolExecutor(args.jobs) as pool:
        results = list(pool.map(lambda j: run(j[1]), jobs))
    scored, failed = [], collections.Counter()
    for (r, argv), (out, err) in zip(jobs, results):
        if out is None:
            failed[err] += 1
            continue
        ttft = out["ttft_s"]["mean"] * 1e3
        tpot = out["tpot_s"]["mean"] * 1e3
        scored.append({
            "row": r, "ttft_ms": ttft, "tpot_ms": tpot,
            "ttft_err": ttft / float(r["silicon_ttft_ms"]) - 1,
            "tpot_err": tpot / float(r["silicon_tpot_ms"]) - 1,
        })
    agg = [r for r in rows if r["mode"] == "agg"]
    expressible = len(jobs)
    print(f"rows: {len(rows)} distinct measurements ({len(agg)} aggregated); "
          f"expressible: {expressible}; scored: {len(scored)} "
          f"(coverage {100 * len(scored) / max(1, expressible):.1f}% of expressible)")
    for why, n in skipped.most_common():
        print(f"  not expressible ({n}): {why}")
    for why, n in failed.most_common():
        print(f"  failed ({n}): {why}")
    groups = [("engine", lambda s: s["row"]["backend"]),
              ("model", lambda s: s["row"]["model_path"]),
              ("layout kind", lambda s: layout_kind(s["row"]))]
    bar = "|" if args.markdown else " "
    for title, key in groups:
        by = collections.defaultdict(list)
        for s in scored:
            by[key(s)].append(s)
        print()
        header = [title, "rows", "TPOT median abs err", "TPOT p90", "TTFT median abs err", "TTFT p90",
                  "TPOT median signed"]
        if args.markdown:
            print("| " + " | ".join(header) + " |")
            print("|" + "---|" * len(header))
        else:
            print(f"{title:36s} {'rows':>5s} {'TPOT med':>9s} {'TPOT p90':>9s} {'TTFT med':>9s} "
                  f"{'TTFT p90':>9s} {'TPOT bias':>9s}")
        for name in sorted(by):
            ss = by[name]
            tm, tp = summary([s["tpot_err"] for s in ss])
            fm, fp = summary([s["ttft_err"] for s in ss])
            bias = f"{100 * statistics.median(s['tpot_err'] for s in ss):+.1f}%"
            if args.markdown:
                print(f"| {name} | {len(ss)} | {tm} | {tp} | {fm} | {fp} | {bias} |")
            else:
                print(f"{name:36s} {len(ss):5d} {tm:>9s} {tp:>9s} {fm:>9s} {fp:>9s} {bias:>9s}")
    failures = []
    by_engine = collections.defaultdict(list)
    for s in scored:
        by_engine[s["row"]["backend"]].append(s)
    for engine, ss in sorted(by_engine.items()):
        for name, bound, key in (("TPOT", args.max_tpot_median, "tpot_err"),
                                 ("TTFT", args.max_ttft_median, "ttft_err")):
            median = statistics.median(abs(s[key]) for s in ss)
            if bound is not None and median > bound:
                failures.append(f"{engine}: {name} median |error| {100 * median:.1f}% exceeds "
                                f"the stated {100 * bound:.0f}%")
    if failed and (args.max_tpot_median is not None or args.max_ttft_median is not None):
        failures.append(f"{sum(failed.values())} expressible rows failed to run")
    if args.details:
        with open(args.details, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["id", "backend", "model", "isl", "osl", "concurrency", "layout",
                        "ttft_ms", "ttft_pred_ms", "tpot_ms", "tpot_pred_ms"])
            for s in scored:
                r = s["row"]
                w.writerow([r["id"], r["backend"], r["model_path"], r["isl"], r["osl"],
                            r["batch_size"], layout_of(r, MODELS[r["model_path"]])[0],
                            r["silicon_ttft_ms"], f"{s['ttft_ms']:.3f}", r["silicon_tpot_ms"],
                            f"{s['tpot_ms']:.3f}"])
    for f in failures:
        print("score_serving: " + f, file=sys.stderr)
    if failures:
        sys.exit(1)


if __name__ == "__main__":
    main()
