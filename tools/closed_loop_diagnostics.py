#!/usr/bin/env python3
"""What closed-loop serving measurements say about their own dynamics, before any model is
fitted to them (data/validation/serving-h100.csv by default). Two readings per measurement set
(engine, model, precision, source), from rows that differ only in output length (OSL):

- k, the clients that wait for a batch slot. Little's law: with C clients of which k always wait,
  the wait before admission is W = k * S / C, S the time a request holds its slot. Two rows that
  differ only in OSL differ in S by d[(OSL - 1) x TPOT] and in TTFT by dW (the prefill does not
  depend on the OSL), so k = C * dTTFT / d[(OSL - 1) x TPOT]. k ~ 0: every request is admitted at
  once; k ~ 1: one client more than the engine admits.
- X, the prefill time a request's decode phase sits through. TPOT = (E2E - TTFT) / (OSL - 1) =
  T_decode + X / (OSL - 1), so X = dTPOT / d[1 / (OSL - 1)]. Clients out of phase (each one's
  prefill lands in the others' decode phases) give X ~ (C - 1) x P, P one prompt's prefill; clients
  in lockstep (a wave of C prompts prefilled before the wave decodes) give X ~ 0.

With --binary, P is shardwise's unloaded prefill of one prompt (`simulate --concurrency 1`), and
the table adds X / ((C - 1) P) and TTFT / P per concurrency band (pairs whose shorter OSL is at
most 512; longer ones hide X). Measurement noise makes single pairs scatter; read the medians.

Usage: tools/closed_loop_diagnostics.py [--csv FILE] [--max-concurrency C] [--pairs]
       [--binary build/shardwise] [--predictions DETAILS.csv]
Only the Python standard library is used.
"""
import argparse
import collections
import csv
import json
import os
import re
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import score_serving  # noqa: E402  (the same row -> simulate command as the scorer)


MAX_SHORT_OSL = 512  # the shorter row of a pair must be this short for X to be read
LOCKSTEP_BELOW = 0.4  # X / ((C - 1) P) under this reads as lockstep (rough, for the label only)
OUT_OF_PHASE_ABOVE = 0.75  # and over this as out of phase


def measurement_set(row):
    """Rows measured together: engine, model, precision and the source file (its dates and
    version digits elided, so one benchmark campaign is one set)."""
    source = re.sub(r"\d+", "N", row["silicon_data_source"].split(";")[0])
    return (row["backend"], row["model_path"], row["precision"] or "bf16", source)


def source_name(row):
    """The row's source file, as its provenance column names it."""
    return os.path.basename(row["silicon_data_source"].split(";")[0].replace("source_file=", ""))


def regime(x_ratio):
    """A rough reading of X / ((C - 1) P): near 0 lockstep, near 1 out of phase."""
    if x_ratio < LOCKSTEP_BELOW:
        return "lockstep"
    return "out of phase" if x_ratio > OUT_OF_PHASE_ABOVE else "partly in step"


def band(clients):
    return "c<=8" if clients <= 8 else ("c16-32" if clients <= 32 else "c>=64")


def unloaded_prefill_ms(row, binary, cache):
    """shardwise's TTFT of one prompt alone on the row's deployment, or None."""
    argv, _ = score_serving.row_command(row, binary)
    if argv is None or "--layout" not in argv:
        return None
    argv[argv.index("--concurrency") + 1] = "1"
    argv[argv.index("--requests") + 1] = "20"
    argv[argv.index("--osl") + 1] = "2"
    key = tuple(argv)
    if key not in cache:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=120)
        cache[key] = json.loads(p.stdout)["ttft_s"]["mean"] * 1e3 if p.returncode == 0 else None
    return cache[key]


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--csv", default=os.path.join(ROOT, "data", "validation", "serving-h100.csv"),
                    help="measured points in the columns of data/validation/serving-h100.md "
                         "(default: %(default)s)")
    ap.add_argument("--max-concurrency", type=int, default=64,
                    help="ignore rows above this concurrency, where KV capacity also queues")
    ap.add_argument("--pairs", action="store_true", help="print every pair's readings")
    ap.add_argument("--binary", help="shardwise binary (build/shardwise): adds X and TTFT relative "
                    "to P, one prompt's prefill alone on the row's deployment, per concurrency "
                    "band, with the regime they suggest")
    ap.add_argument("--predictions", help="a `score_serving.py --details` file: read shardwise's "
                    "predicted TTFT and TPOT in place of the measured ones (is the simulated "
                    "closed loop in the measured regime?)")
    args = ap.parse_args()
    predicted = {}
    if args.predictions:
        for p in csv.DictReader(open(args.predictions)):
            predicted[p["id"]] = (p["ttft_pred_ms"], p["tpot_pred_ms"])
    groups = collections.defaultdict(dict)
    for r in csv.DictReader(open(args.csv)):
        if args.predictions:
            if r["id"] not in predicted:
                continue
            r["silicon_ttft_ms"], r["silicon_tpot_ms"] = predicted[r["id"]]
        if r["mode"] != "agg" or not r["batch_size"]:
            continue
        clients = int(r["batch_size"]) * int(r["attention_dp_size"] or 1)
        if clients > args.max_concurrency:
            continue
        layout = (r["tp_size"], r["attention_dp_size"], r["moe_ep_size"], r["isl"], clients)
        groups[(measurement_set(r), layout)][int(r["osl"])] = r
    depth = collections.defaultdict(list)
    relative = collections.defaultdict(list)
    sources = {}
    cache = {}
    for (mset, layout), by_osl in sorted(groups.items()):
        if len(by_osl) < 2:
            continue
        short, long = by_osl[min(by_osl)], by_osl[max(by_osl)]
        steps = [int(x["osl"]) - 1 for x in (short, long)]
        tpot = [float(x["silicon_tpot_ms"]) for x in (short, long)]
        ttft = [float(x["silicon_ttft_ms"]) for x in (short, long)]
        if steps[1] * tpot[1] <= steps[0] * tpot[0]:
            continue
        clients = layout[-1]
        k = clients * (ttft[1] - ttft[0]) / (steps[1] * tpot[1] - steps[0] * tpot[0])
        x_ms = (tpot[0] - tpot[1]) / (1 / steps[0] - 1 / steps[1])
        depth[mset].append(k)
        sources.setdefault(mset, source_name(short))
        p_ms = unloaded_prefill_ms(short, args.binary, cache) if args.binary else None
        # X needs a short OSL: with 1024 and 8192 both 1 / (OSL - 1) are tiny, and the longer
        # context of the long rows' decode (slower attention) outweighs the prefill term.
        if p_ms and clients > 1 and steps[0] < MAX_SHORT_OSL:
            relative[(mset, band(clients))].append((x_ms / ((clients - 1) * p_ms),
                                                    ttft[0] / p_ms))
        if args.pairs:
            print(f"{mset[0]:7s} {mset[1]:34s} tp{layout[0]} adp{layout[1] or 1} isl {layout[3]:>5s} "
                  f"c{clients:<4d} osl {min(by_osl)}->{max(by_osl)}: k = {k:+.2f}, X = {x_ms:.0f} ms"
                  + (f", P = {p_ms:.1f} ms" if p_ms else ""))
    print("k: clients waiting for a batch slot (0: all admitted at once; 1: one always queued)")
    print(f"{'engine':7s} {'model':34s} {'precision':9s} {'pairs':>5s} {'median k':>9s}  source "
          "(first file of the set)")
    for mset, ks in sorted(depth.items()):
        print(f"{mset[0]:7s} {mset[1]:34s} {mset[2]:9s} {len(ks):5d} {statistics.median(ks):+9.2f}"
              f"  {sources[mset]}")
    if relative:
        print()
        print("X / ((C-1) P): the other clients' prefills in a request's decode phase, in prompts "
              "(0: lockstep; 1: out of phase)")
        print(f"{'engine':7s} {'model':34s} {'band':7s} {'pairs':>5s} {'X/((C-1)P)':>11s} "
              f"{'TTFT/P':>7s}  reading")
        for (mset, b), vs in sorted(relative.items()):
            x_ratio = statistics.median(v[0] for v in vs)
            print(f"{mset[0]:7s} {mset[1]:34s} {b:7s} {len(vs):5d} {x_ratio:11.2f} "
                  f"{statistics.median(v[1] for v in vs):7.2f}  {regime(x_ratio)}")


if __name__ == "__main__":
    main()
