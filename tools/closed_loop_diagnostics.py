#!/usr/bin/env python3
"""What closed-loop serving measurements say about their own dynamics, before any model is
fitted to them (data/validation/serving-h100.csv by default). Two readings per measurement set
(engine, engine version, model, precision, source file), from rows that differ only in output
length (OSL):

- k, the clients that wait for a batch slot. Little's law: C clients cycle through a request's
  end-to-end time E2E = TTFT + (OSL - 1) x TPOT at a throughput of C / E2E, and the k of them
  waiting for a slot spend W = k x E2E / C each. Two rows that differ only in OSL differ in TTFT
  by dW (the prefill does not depend on the OSL), so k = C x dTTFT / dE2E. k ~ 0: every request
  is admitted at once; k ~ 1: one client more than the engine admits; k < 0: TTFT falls as the
  OSL grows (waves that prefill together, as in lockstep).
- X, the prefill time a request's decode phase sits through. TPOT = (E2E - TTFT) / (OSL - 1) =
  T_decode + X / (OSL - 1), so X = dTPOT / d[1 / (OSL - 1)]. Clients out of phase (each one's
  prefill lands in the others' decode phases) give X ~ (C - 1) x P, P one prompt's prefill; clients
  in lockstep (a wave of C prompts prefilled before the wave decodes) give X ~ 0. X is read only
  where the shorter OSL is at most 512: with 1,024 and 8,192 both 1 / (OSL - 1) are tiny and the
  longer rows' slower attention outweighs it.

With --ceiling, a third reading, from the rows at --ceiling-concurrency clients or more: the
closed loop's throughput C / E2E (requests per second) at its best over every layout and
concurrency of a measurement set and prompt and output length, how many layouts come within 10%
of that best, and the best's milliseconds per request per decoder layer (the model's layers from
data/models/). A best that several tensor-parallel widths share is not the GPUs' (their work
falls with the width): a ceiling elsewhere, which a per-layer figure that holds across models
places in work done per request and layer.

With --binary, P is shardwise's unloaded prefill of one prompt (`simulate --concurrency 1`), and
the table adds X / ((C - 1) P) and TTFT / P per concurrency band. Measurement noise makes single
pairs scatter; read the medians. Rows whose id names a narrower layout than their columns (see
score_serving.py) are read with the id's layout and concurrency.

Usage: tools/closed_loop_diagnostics.py [--csv FILE] [--max-concurrency C] [--pairs]
       [--binary build/shardwise] [--predictions DETAILS.csv] [--ceiling [--ceiling-concurrency C]]
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

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import score_serving  # noqa: E402  (the same row -> simulate command as the scorer)

MAX_SHORT_OSL = 512  # the shorter row of a pair must be this short for X to be read
LOCKSTEP_BELOW = 0.4  # X / ((C - 1) P) under this reads as lockstep (rough, for the label only)
OUT_OF_PHASE_ABOVE = 0.75  # and over this as out of phase
SHARED_BEST = 0.9  # a layout within 10% of the best throughput shares the ceiling


def measurement_set(row):
    """Rows measured together: engine, its version, model, precision and the source file."""
    return (row["backend"], row["backend_version"] or "?", row["model_path"],
            row["precision"] or "bf16", source_name(row))


def source_name(row):
    """The row's source file, as its provenance column names it."""
    return os.path.basename(row["silicon_data_source"].split(";")[0].replace("source_file=", ""))


def clients_and_layout(row):
    """(concurrency, (tp, attention dp, ep)) of an aggregated row as it ran, or None."""
    ran = score_serving.inflated_layout(row)
    if ran:
        clients = score_serving.concurrency_of(row)
        return (clients, ran) if clients else None
    if not row["batch_size"]:
        return None
    adp = int(row["attention_dp_size"] or 1)
    return int(row["batch_size"]) * adp, (row["tp_size"], adp, row["moe_ep_size"])


def regime(x_ratio):
    """A rough reading of X / ((C - 1) P): near 0 lockstep, near 1 out of phase."""
    if x_ratio < LOCKSTEP_BELOW:
        return "lockstep"
    return "out of phase" if x_ratio > OUT_OF_PHASE_ABOVE else "partly in step"


def unloaded_prefill_ms(row, binary, cache):
    """shardwise's TTFT of one prompt alone on the row's deployment, or None."""
    argv, _ = score_serving.row_command(row, binary)
    if argv is None or "--layout" not in argv:
        return None
    argv[argv.index("--concurrency") + 1] = "1"
    argv += ["--requests", "20"]
    argv[argv.index("--osl") + 1] = "2"
    key = tuple(argv)
    if key not in cache:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=120)
        cache[key] = json.loads(p.stdout)["ttft_s"]["mean"] * 1e3 if p.returncode == 0 else None
    return cache[key]


def read_groups(path, predictions, max_concurrency):
    """{(set, (clients, layout, isl)): {osl: row}} of the aggregated rows, and how many rows
    repeated a (set, layout, lengths, concurrency) already read (the first is kept)."""
    predicted = {}
    if predictions:
        with open(predictions, newline="") as f:
            for p in csv.DictReader(f):
                predicted[p["id"]] = (p["ttft_pred_ms"], p["tpot_pred_ms"])
    groups = collections.defaultdict(dict)
    repeats = 0
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            if r["mode"] != "agg" or (predictions and r["id"] not in predicted):
                continue
            if predictions:
                r["silicon_ttft_ms"], r["silicon_tpot_ms"] = predicted[r["id"]]
            ran = clients_and_layout(r)
            if ran is None or ran[0] > max_concurrency:
                continue
            by_osl = groups[(measurement_set(r), (ran[0], ran[1], r["isl"]))]
            if int(r["osl"]) in by_osl:
                repeats += 1
                continue
            by_osl[int(r["osl"])] = r
    return groups, repeats


def decoder_layers(hf_name):
    """The catalog model's decoder layers (data/models/<name>.json), or None if not in it."""
    name = score_serving.catalog_model(hf_name)
    path = os.path.join(ROOT, "data", "models", f"{name}.json") if name else ""
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f).get("num_hidden_layers")


def print_ceilings(path, min_concurrency):
    """Per measurement set and lengths, the best closed-loop throughput C / E2E over the rows at
    `min_concurrency` clients or more, the layouts within SHARED_BEST of it, and the best's
    milliseconds per request per decoder layer."""
    best = collections.defaultdict(dict)  # (set, isl, osl) -> {layout: requests/s}
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            ran = clients_and_layout(r) if r["mode"] == "agg" else None
            if ran is None or ran[0] < min_concurrency:
                continue
            e2e_s = (float(r["silicon_ttft_ms"]) +
                     (int(r["osl"]) - 1) * float(r["silicon_tpot_ms"])) / 1e3
            key = (measurement_set(r), int(r["isl"]), int(r["osl"]))
            tp, adp, ep = ran[1]
            layout = (f"tp{tp}" + (f" adp{adp}" if int(adp) > 1 else "") +
                      (f" ep{ep}" if ep and int(ep) > 1 else ""))
            best[key][layout] = max(best[key].get(layout, 0.0), ran[0] / e2e_s)
    print(f"closed-loop ceiling: best C / E2E at {min_concurrency} clients or more, the layouts "
          f"within {100 * (1 - SHARED_BEST):.0f}% of it, and ms per request per decoder layer")
    print(f"{'engine':7s} {'version':12s} {'model':34s} {'precision':9s} {'ISL':>5s} {'OSL':>5s} "
          f"{'best req/s':>10s} {'layouts':>7s} {'ms/req/layer':>12s}  best at  source")
    for (mset, isl, osl), by_layout in sorted(best.items(), key=str):
        top = max(by_layout.values())
        shared = sum(1 for x in by_layout.values() if x >= SHARED_BEST * top)
        layers = decoder_layers(mset[2])
        per_layer = f"{1e3 / (top * layers):12.3f}" if layers else f"{'-':>12s}"
        where = max(by_layout, key=by_layout.get)
        print(f"{mset[0]:7s} {mset[1]:12s} {mset[2]:34s} {mset[3]:9s} {isl:5d} {osl:5d} "
              f"{top:10.2f} {shared:3d} of {len(by_layout):<1d} {per_layer}  {where:7s}  "
              f"{mset[4]}")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--csv", default=os.path.join(ROOT, "data", "validation", "serving-h100.csv"),
                    help="measured points in the columns of data/validation/serving-h100.md "
                         "(default: %(default)s)")
    ap.add_argument("--max-concurrency", type=int, default=64,
                    help="ignore rows above this concurrency, where KV capacity also queues")
    ap.add_argument("--pairs", action="store_true", help="print every pair's readings")
    ap.add_argument("--binary", help="shardwise binary (build/shardwise): adds X and TTFT "
                    "relative to P, one prompt's prefill alone on the row's deployment, per "
                    "concurrency "
                    "band, with the regime they suggest")
    ap.add_argument("--by-isl", action="store_true",
                    help="split the X / ((C-1) P) and TTFT / P table by prompt length too (does the "
                         "regime follow the token budget, as simulated waves do?)")
    ap.add_argument("--predictions", help="a `score_serving.py --details` file: read shardwise's "
                    "predicted TTFT and TPOT in place of the measured ones (is the simulated "
                    "closed loop in the measured regime?)")
    ap.add_argument("--ceiling", action="store_true",
                    help="print only the closed-loop throughput ceiling per set and lengths "
                         "(see above)")
    ap.add_argument("--ceiling-concurrency", type=int, default=64,
                    help="--ceiling reads rows at this many clients or more (default %(default)s)")
    args = ap.parse_args()
    if args.ceiling:
        print_ceilings(args.csv, args.ceiling_concurrency)
        return
    groups, repeats = read_groups(args.csv, args.predictions, args.max_concurrency)
    depth = collections.defaultdict(list)
    relative = collections.defaultdict(list)
    cache = {}
    for (mset, (clients, layout, isl)), by_osl in sorted(groups.items(), key=str):
        if len(by_osl) < 2:
            continue
        short, long = by_osl[min(by_osl)], by_osl[max(by_osl)]
        steps = [int(x["osl"]) - 1 for x in (short, long)]
        tpot = [float(x["silicon_tpot_ms"]) for x in (short, long)]
        ttft = [float(x["silicon_ttft_ms"]) for x in (short, long)]
        e2e = [ttft[i] + steps[i] * tpot[i] for i in (0, 1)]
        if e2e[1] <= e2e[0]:
            continue
        k = clients * (ttft[1] - ttft[0]) / (e2e[1] - e2e[0])
        depth[mset].append(k)
        x_ms = None
        if steps[0] < MAX_SHORT_OSL:
            x_ms = (tpot[0] - tpot[1]) / (1 / steps[0] - 1 / steps[1])
        p_ms = unloaded_prefill_ms(short, args.binary, cache) if args.binary else None
        if p_ms and x_ms is not None and clients > 1:
            band = score_serving.concurrency_band(clients)
            key = (mset, band, int(isl)) if args.by_isl else (mset, band, None)
            relative[key].append((x_ms / ((clients - 1) * p_ms), ttft[0] / p_ms))
        if args.pairs:
            print(f"{mset[0]:7s} {mset[2]:34s} tp{layout[0]} adp{layout[1]} isl {isl:>5s} "
                  f"c{clients:<4d} osl {min(by_osl)}->{max(by_osl)}: k = {k:+.2f}, X = "
                  + (f"{x_ms:.0f} ms" if x_ms is not None else "-")
                  + (f", P = {p_ms:.1f} ms" if p_ms else ""))
    print("k: clients waiting for a batch slot (0: all admitted at once; 1: one always queued)")
    print(f"{'engine':7s} {'version':12s} {'model':34s} {'precision':9s} {'pairs':>5s} "
          f"{'median k':>9s}  source")
    for mset, ks in sorted(depth.items()):
        print(f"{mset[0]:7s} {mset[1]:12s} {mset[2]:34s} {mset[3]:9s} {len(ks):5d} "
              f"{statistics.median(ks):+9.2f}  {mset[4]}")
    if repeats:
        print(f"({repeats} rows repeat a set's layout, lengths and concurrency: the first is "
              "read)")
    if relative:
        print()
        print("X / ((C-1) P): the other clients' prefills in a request's decode phase, in prompts "
              "(0: lockstep; 1: out of phase)")
        isl_column = f" {'ISL':>5s}" if args.by_isl else ""
        print(f"{'engine':7s} {'version':12s} {'model':34s} {'band':7s}{isl_column} {'pairs':>5s} "
              f"{'X/((C-1)P)':>11s} {'TTFT/P':>7s}  reading")
        for (mset, band, isl), vs in sorted(relative.items(), key=str):
            x_ratio = statistics.median(v[0] for v in vs)
            isl_text = f" {isl:5d}" if args.by_isl else ""
            print(f"{mset[0]:7s} {mset[1]:12s} {mset[2]:34s} {band:7s}{isl_text} {len(vs):5d} "
                  f"{x_ratio:11.2f} {statistics.median(v[1] for v in vs):7.2f}  {regime(x_ratio)}")


if __name__ == "__main__":
    main()
