#!/usr/bin/env python3
"""Estimates, from measured closed-loop serving points alone, how many clients wait for a batch
slot: the requests queued in front of the engine (data/validation/serving-h100.csv by default).

Little's law. With C clients of which k always wait for one of the engine's slots, the mean wait
before admission is W = k * S / C, where S is the time a request holds its slot. Two rows that
differ only in output length differ in S by d[(OSL - 1) x TPOT] and in TTFT by dW (the prefill
itself does not depend on the output length), so k = C * dTTFT / d[(OSL - 1) x TPOT]. k near 0:
every client's request is admitted at once (TTFT does not grow with the output length); k near 1:
one more client than the engine admits. Measurement noise makes single pairs scatter; medians per
measurement set (engine, model, precision, source) are what to read.

Usage: tools/serving_queue_depth.py [--csv FILE] [--max-concurrency C] [--pairs]
Only the Python standard library is used.
"""
import argparse
import collections
import csv
import os
import re
import statistics

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def measurement_set(row):
    """Rows measured together: engine, model, precision and the source file (digits elided)."""
    source = re.sub(r"\d+", "N", row["silicon_data_source"].split(";")[0])
    return (row["backend"], row["model_path"], row["precision"] or "bf16", source)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--csv", default=os.path.join(ROOT, "data", "validation", "serving-h100.csv"))
    ap.add_argument("--max-concurrency", type=int, default=64,
                    help="ignore rows above this concurrency, where KV capacity also queues")
    ap.add_argument("--pairs", action="store_true", help="print every pair's estimate")
    args = ap.parse_args()
    groups = collections.defaultdict(dict)
    for r in csv.DictReader(open(args.csv)):
        if r["mode"] != "agg" or not r["batch_size"]:
            continue
        clients = int(r["batch_size"]) * int(r["attention_dp_size"] or 1)
        if clients > args.max_concurrency:
            continue
        layout = (r["tp_size"], r["attention_dp_size"], r["moe_ep_size"], r["isl"], clients)
        groups[(measurement_set(r), layout)][int(r["osl"])] = r
    depth = collections.defaultdict(list)
    for (mset, layout), by_osl in sorted(groups.items()):
        if len(by_osl) < 2:
            continue
        short, long = by_osl[min(by_osl)], by_osl[max(by_osl)]
        decode = [(int(x["osl"]) - 1) * float(x["silicon_tpot_ms"]) for x in (short, long)]
        if decode[1] <= decode[0]:
            continue
        clients = layout[-1]
        k = clients * (float(long["silicon_ttft_ms"]) - float(short["silicon_ttft_ms"])) / (
            decode[1] - decode[0])
        depth[mset].append(k)
        if args.pairs:
            print(f"{mset[0]:7s} {mset[1]:34s} tp{layout[0]} adp{layout[1] or 1} isl {layout[3]:>5s} "
                  f"c{clients:<4d} osl {min(by_osl)}->{max(by_osl)}: k = {k:+.2f}")
    print(f"{'engine':7s} {'model':34s} {'precision':9s} {'pairs':>5s} {'median k':>9s}  source")
    for mset, ks in sorted(depth.items()):
        print(f"{mset[0]:7s} {mset[1]:34s} {mset[2]:9s} {len(ks):5d} {statistics.median(ks):+9.2f}"
              f"  {mset[3][-60:]}")


if __name__ == "__main__":
    main()
