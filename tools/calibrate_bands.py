#!/usr/bin/env python3
"""Where measured closed loops fell around shardwise's predictions, per engine: the fields
closed_loop_ttft_ratio_p10/_p90 and closed_loop_tpot_ratio_p10/_p90 of data/engines/*.json.

Reads a `tools/score_serving.py --aggregated-only --details FILE` table (one row per measured
closed loop: the measured and the predicted mean TTFT and TPOT) and prints, per engine, the 10th
and 90th percentile of measured / predicted (linear interpolation between order statistics, as
Python's statistics.quantiles(..., method="inclusive")), rounded outwards to two decimals, and
the profile fields to paste. simulate and plan stretch a closed loop's bands to cover that
spread, so about 80% of such measurements should fall inside them.

That share is checked out of sample: the rows are split in two folds (alternate rows in id
order), each fold's percentiles are read off the other fold's rows, and the table gives how
many of each fold's measurements fall within [predicted x p10, predicted x p90] of the other's.
The bands simulate prints are at least this wide (they also cover the inputs' provenance and a
fixed-length loop's other client phase), so they contain at least as many.

Disaggregated rows (an engine named "<engine> disagg") are left out: simulate does not stretch
their bands. Only the Python standard library is used.

Usage: tools/calibrate_bands.py DETAILS.csv [--json] [--gpu h100-sxm]
       [--measurements "data/validation/serving-h100.csv"]
"""
import argparse
import collections
import csv
import json
import math
import sys

LOW_PERCENTILE, HIGH_PERCENTILE = 10, 90
MIN_ROWS = 10  # fewer measurements than this give no percentile worth a band


def percentile(values, q):
    """The q-th percentile of `values`, interpolating between order statistics."""
    v = sorted(values)
    position = q / 100 * (len(v) - 1)
    below = math.floor(position)
    above = min(below + 1, len(v) - 1)
    return v[below] + (v[above] - v[below]) * (position - below)


def outwards(low, high):
    """(low, high) rounded outwards to two decimals."""
    slack = 1e-9  # a bound that is two decimals exactly, up to rounding, stays put
    return math.floor(low * 100 + slack) / 100, math.ceil(high * 100 - slack) / 100


def spread(ratios):
    """(p10, p90) of measured / predicted, rounded outwards to two decimals."""
    return outwards(percentile(ratios, LOW_PERCENTILE), percentile(ratios, HIGH_PERCENTILE))


def share_within(ratios, band):
    """The share of `ratios` inside [band[0], band[1]]."""
    return sum(band[0] <= r <= band[1] for r in ratios) / len(ratios)


def cross_validated(ratios):
    """The share of each fold's ratios inside the spread read off the other fold, over both."""
    folds = [ratios[0::2], ratios[1::2]]
    if min(len(f) for f in folds) < MIN_ROWS:
        return None
    inside = sum(share_within(folds[i], spread(folds[1 - i])) * len(folds[i]) for i in (0, 1))
    return inside / len(ratios)


def read(path):
    """{engine: [(id, ttft ratio, tpot ratio)]} of the aggregated rows, in id order."""
    by_engine = collections.defaultdict(list)
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            if row["backend"].endswith(" disagg"):
                continue
            ratios = []
            for measured, predicted in (("ttft_ms", "ttft_pred_ms"), ("tpot_ms", "tpot_pred_ms")):
                m, p = float(row[measured]), float(row[predicted])
                if not (math.isfinite(m) and math.isfinite(p) and m > 0 and p > 0):
                    sys.exit(f"calibrate_bands: row {row['id']}: {measured} and {predicted} must "
                             "be positive numbers")
                ratios.append(m / p)
            by_engine[row["backend"]].append((row["id"], *ratios))
    for rows in by_engine.values():
        rows.sort()
    return by_engine


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("details", help="a `score_serving.py --aggregated-only --details` CSV")
    ap.add_argument("--json", action="store_true",
                    help="print the profile fields of every engine as JSON")
    ap.add_argument("--gpu", default="h100-sxm",
                    help="the catalog GPU the measurements ran on (default: %(default)s)")
    ap.add_argument("--measurements", default="data/validation/serving-h100.csv",
                    help="the measured file the details were scored on, for the fields' sources "
                         "(default: %(default)s)")
    args = ap.parse_args()
    try:
        by_engine = read(args.details)
    except (OSError, KeyError, ValueError) as e:
        sys.exit(f"calibrate_bands: cannot read {args.details} as a score_serving.py --details "
                 f"table: {e}")
    fields = {}
    if not args.json:
        print(f"{'engine':8s} {'rows':>5s} {'TTFT p10':>9s} {'TTFT p90':>9s} {'TPOT p10':>9s} "
              f"{'TPOT p90':>9s} {'TTFT inside':>12s} {'TPOT inside':>12s}")
    for engine, rows in sorted(by_engine.items()):
        if len(rows) < MIN_ROWS:
            print(f"calibrate_bands: {engine}: {len(rows)} rows, fewer than {MIN_ROWS}; no band",
                  file=sys.stderr)
            continue
        ttft, tpot = [r[1] for r in rows], [r[2] for r in rows]
        spreads = {"ttft": spread(ttft), "tpot": spread(tpot)}
        fields[engine] = {}
        for name, (low, high) in spreads.items():
            source = (f"10th and 90th percentile of measured / predicted mean {name.upper()} over "
                      f"{len(rows)} closed loops of this engine (every version measured) on "
                      f"{args.gpu}, {args.measurements}: tools/calibrate_bands.py on "
                      "tools/score_serving.py --details (docs/validation.md)")
            for suffix, value in (("p10", low), ("p90", high)):
                fields[engine][f"closed_loop_{name}_ratio_{suffix}"] = {
                    "value": value, "provenance": "fitted", "source": source}
        fields[engine]["closed_loop_measured_on"] = {
            "value": args.gpu, "provenance": "measured",
            "source": f"the GPU of every row the closed_loop_*_ratio fields were read from: "
                      f"{args.measurements}"}
        if not args.json:
            inside = [cross_validated(ttft), cross_validated(tpot)]
            shares = [f"{100 * s:.0f}%" if s is not None else "-" for s in inside]
            print(f"{engine:8s} {len(rows):5d} {spreads['ttft'][0]:9.2f} {spreads['ttft'][1]:9.2f} "
                  f"{spreads['tpot'][0]:9.2f} {spreads['tpot'][1]:9.2f} {shares[0]:>12s} "
                  f"{shares[1]:>12s}")
    if args.json:
        print(json.dumps(fields, indent=2))
    else:
        print(f"(inside: the share of measurements within the {LOW_PERCENTILE}th-"
              f"{HIGH_PERCENTILE}th percentile spread read off the other fold; two folds)")


if __name__ == "__main__":
    main()
