#!/usr/bin/env python3
"""Fits the perf model's GEMM tile overhead to measured GEMM times (issue 9, item 7).

Reads the output of build/bench/gpu_gemm_k_sweep_bench (one or more runs; every measured row
is one point) and fits, per series, the two parameters of GpuSpec::GemmEfficiency
(src/hw/gpu.cc):

    efficiency = fraction x wave quantisation(m, n, sm_count) x k_unit / (k_unit + overhead_k)

by least squares on log time, where the model's time is what perf/ops.cc charges a GEMM: the
larger of 2mnk / (peak x efficiency) and the bytes moved over the calibrated HBM rate
(hbm_bytes_per_s x hbm_fraction). Prints, per series (output dtype), the root mean square of
log(measured / model) for:
  free fit                 overhead_k and fraction both fitted;
  anchored                 overhead_k fitted, the fraction following it so that the model's
                           efficiency at --anchor (8192^3) stays where the catalog puts it: at
                           the published large-GEMM measurement its fraction was fitted to;
  at the catalog fraction  overhead_k fitted, the catalog's fraction;
  at the catalog overhead  the fraction fitted, the catalog's overhead_k;
  catalog as is;
then every point's measured / model under the anchored, free and catalog parameters. Each
overhead is also shown as time per 128 x 256 output tile on one SM (overhead_k k-steps at the
SM's share of peak x fraction), beside the time the SM's share of the HBM rate takes to write
the tile's output (128 x 256 x output bytes). With --write-form K, also the rms of a form the
data suggest (not the model's): the overhead as that write, K x output bytes / 2 K-elements for
bf16 (fp32 partial sums, 4 bytes, when the model splits k), x the dtype's peak / bf16's peak,
at the catalog's fractions.

Usage: tools/fit_gemm_tile_overhead.py [--gpu data/gpus/h100-sxm.json] [--series S,...]
       [--shapes square|skinny|all] [--anchor M,N,K] [--write-form K] [--quiet] FILE...
Only the Python standard library is used.
"""
import argparse
import json
import math
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SERIES_DTYPE = {"bf16-f32": "bf16", "bf16-bf16": "bf16", "fp8-f32": "fp8", "fp8-bf16": "fp8"}
OUTPUT_BYTES = {"bf16-f32": 4, "bf16-bf16": 2, "fp8-f32": 4, "fp8-bf16": 2}
TILE_M, TILE_N = 128, 256  # GpuSpec::GemmEfficiency's output tile (large m)


def efficiency(m, n, k, fraction, overhead_k, sm_count):
    """GpuSpec::GemmEfficiency (src/hw/gpu.cc), line for line."""
    tile_n = 256.0
    tile_m = 64.0 if m <= 64 else 128.0
    sms = float(sm_count)
    tiles = math.ceil(m / tile_m) * math.ceil(n / tile_n)
    split_k = max(1.0, math.floor(sms / tiles))
    units = tiles * split_k
    waves = math.ceil(units / sms)
    k_unit = k / split_k
    return fraction * units / (waves * sms) * k_unit / (k_unit + overhead_k)


class Gpu:
    def __init__(self, path):
        with open(path) as f:
            spec = json.load(f)
        self.name = spec["name"]
        self.peak = spec["peak_flops_per_s"]
        achievable = spec["achievable"]
        self.fraction = achievable["gemm_fraction"]
        # One number for every dtype, or an object of dtype -> number (bf16's for the others).
        overhead = achievable.get("gemm_tile_overhead_k", 0.0)
        self.overhead_by_dtype = overhead if isinstance(overhead, dict) else {"bf16": overhead}
        self.hbm = spec["hbm_bytes_per_s"] * achievable["hbm_fraction"]
        self.sm_count = spec["sm_count"]

    def overhead_k(self, dtype):
        return self.overhead_by_dtype.get(dtype, self.overhead_by_dtype.get("bf16", 0.0))

    def time_s(self, point, fraction, overhead_k):
        m, n, k = point["m"], point["n"], point["k"]
        flops = 2.0 * m * n * k
        compute = flops / (self.peak[point["dtype"]] * efficiency(m, n, k, fraction, overhead_k,
                                                                  self.sm_count))
        return max(compute, point["bytes"] / self.hbm), compute


def read_points(paths):
    points = []
    for path in paths:
        with open(path) as f:
            for line in f:
                cols = line.split()
                if len(cols) < 9 or cols[0] not in SERIES_DTYPE:
                    continue
                points.append({
                    "series": cols[0], "dtype": SERIES_DTYPE[cols[0]], "shape": cols[1],
                    "m": int(cols[2]), "n": int(cols[3]), "k": int(cols[4]),
                    "bytes": float(cols[5]) * 1e6, "t": float(cols[8]) * 1e-6,
                    "file": os.path.basename(path),
                })
    return points


def cost(gpu, points, fraction, overhead_k):
    return sum(math.log(p["t"] / gpu.time_s(p, fraction, overhead_k)[0]) ** 2 for p in points)


def fit(gpu, points, fraction=None):
    """Least squares over overhead_k in [0, 3000] (and fraction in [0.3, 1.2] when None), by a
    coarse grid refined twice around its best point."""
    best = None
    k_lo, k_hi, k_step = 0.0, 3000.0, 20.0
    f_lo, f_hi, f_step = (0.3, 1.2, 0.01) if fraction is None else (fraction, fraction, 1.0)
    for _ in range(3):
        ks = [k_lo + i * k_step for i in range(int(round((k_hi - k_lo) / k_step)) + 1)]
        fs = [f_lo + i * f_step for i in range(int(round((f_hi - f_lo) / f_step)) + 1)]
        for f in fs:
            for k in ks:
                c = cost(gpu, points, f, k)
                if best is None or c < best[0]:
                    best = (c, f, k)
        _, f0, k0 = best
        k_lo, k_hi = max(0.0, k0 - 2 * k_step), k0 + 2 * k_step
        k_step /= 10
        if fraction is None:
            f_lo, f_hi = f0 - 2 * f_step, f0 + 2 * f_step
            f_step /= 10
    c, f, k = best
    return f, k, math.sqrt(c / len(points))


def fit_anchored(gpu, points, anchor):
    """overhead_k alone; the fraction keeps the model's efficiency at `anchor` (m, n, k) where the
    catalog's fraction and overhead put it."""
    m, n, k = anchor
    target = efficiency(m, n, k, gpu.fraction[points[0]["dtype"]],
                        gpu.overhead_k(points[0]["dtype"]), gpu.sm_count)
    best = None
    lo, hi, step = 0.0, 3000.0, 20.0
    for _ in range(3):
        for i in range(int(round((hi - lo) / step)) + 1):
            ok = lo + i * step
            f = target / efficiency(m, n, k, 1.0, ok, gpu.sm_count)
            c = cost(gpu, points, f, ok)
            if best is None or c < best[0]:
                best = (c, f, ok)
        lo, hi, step = max(0.0, best[2] - 2 * step), best[2] + 2 * step, step / 10
    c, f, ok = best
    return f, ok, math.sqrt(c / len(points))


def write_form_rms(gpu, points, overhead_k, output_bytes):
    """rms of log(measured / model) with the overhead scaled as the output write (see --write-form)."""
    total = 0.0
    for p in points:
        m, n, k = p["m"], p["n"], p["k"]
        tile_m = 64.0 if m <= 64 else 128.0
        tiles = math.ceil(m / tile_m) * math.ceil(n / 256.0)
        split_k = max(1.0, math.floor(gpu.sm_count / tiles))
        written = 4 if split_k > 1 else output_bytes
        scaled = overhead_k * written / 2 * gpu.peak[p["dtype"]] / gpu.peak["bf16"]
        eff = efficiency(m, n, k, gpu.fraction[p["dtype"]], scaled, gpu.sm_count)
        t = max(2.0 * m * n * k / (gpu.peak[p["dtype"]] * eff), p["bytes"] / gpu.hbm)
        total += math.log(p["t"] / t) ** 2
    return math.sqrt(total / len(points))


def tile_us(gpu, dtype, fraction, overhead_k):
    """overhead_k k-steps of one 128 x 256 tile at one SM's share of peak x fraction, in us."""
    return overhead_k * 2 * TILE_M * TILE_N / (gpu.peak[dtype] * fraction / gpu.sm_count) * 1e6


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="+", help="gpu_gemm_k_sweep_bench output")
    ap.add_argument("--gpu", default=os.path.join(ROOT, "data", "gpus", "h100-sxm.json"))
    ap.add_argument("--series", default=",".join(SERIES_DTYPE))
    ap.add_argument("--shapes", choices=["square", "skinny", "all"], default="all")
    ap.add_argument("--anchor", default="8192,8192,8192",
                    help="m,n,k whose catalog prediction the re-fitted fraction keeps")
    ap.add_argument("--write-form", type=float, metavar="K",
                    help="also the rms with the overhead as the output write, K for a bf16 tile")
    ap.add_argument("--quiet", action="store_true", help="no per-point residuals")
    args = ap.parse_args()
    gpu = Gpu(args.gpu)
    points = read_points(args.files)
    if args.shapes != "all":
        points = [p for p in points if (p["shape"] == "square") == (args.shapes == "square")]
    if not points:
        sys.exit("no measured rows in " + ", ".join(args.files))
    am, an, ak = (float(v) for v in args.anchor.split(","))
    print(f"catalog {gpu.name}: overhead_k {gpu.overhead_by_dtype}, fraction {gpu.fraction}, "
          f"sm_count {gpu.sm_count}, HBM {gpu.hbm / 1e9:.0f} GB/s achievable; "
          f"{len(points)} points from {len(args.files)} file(s), shapes: {args.shapes}")
    for series in args.series.split(","):
        pts = [p for p in points if p["series"] == series]
        if not pts:
            continue
        dtype = pts[0]["dtype"]
        cat_f = gpu.fraction[dtype]
        cat_k = gpu.overhead_k(dtype)
        f, k, rms = fit(gpu, pts)
        af, ak_, arms = fit_anchored(gpu, pts, (am, an, ak))
        _, k_at_cat, rms_at_cat = fit(gpu, pts, fraction=cat_f)
        rms_catalog = math.sqrt(cost(gpu, pts, cat_f, cat_k) / len(pts))
        f_old_k, _, rms_old_k = fit_fixed_k(gpu, pts, cat_k)
        write_us = TILE_M * TILE_N * OUTPUT_BYTES[series] / (gpu.hbm / gpu.sm_count) * 1e6
        print(f"\n== {series} ({dtype}, {len(pts)} points): rms |log(measured / model)|; "
              f"us per tile; writing a tile's output at 1/{gpu.sm_count} of HBM: {write_us:.2f} us")
        rows = [("free fit", k, f, rms), (f"anchored at {args.anchor}", ak_, af, arms),
                ("at the catalog fraction", k_at_cat, cat_f, rms_at_cat),
                ("at the catalog overhead", cat_k, f_old_k, rms_old_k),
                ("catalog as is", cat_k, cat_f, rms_catalog)]
        for name, ok, of, orms in rows:
            print(f"  {name:26} overhead_k {ok:7.1f}  fraction {of:.3f}  rms {orms:.3f}  "
                  f"{tile_us(gpu, dtype, of, ok):5.2f} us per tile")
        if args.write_form is not None:
            print(f"  {'as the output write':26} overhead_k {args.write_form:7.1f} (bf16 tile)  "
                  f"rms {write_form_rms(gpu, pts, args.write_form, OUTPUT_BYTES[series]):.3f}")
        if args.quiet:
            continue
        print(f"  {'shape':10} {'m':>5} {'n':>6} {'k':>6} {'runs':>4} {'meas us':>9} {'spread':>6} "
              f"{'anch us':>9} {'bound':>7} {'anchored':>8} {'free':>6} {'catalog':>7}   "
              f"median measured / model")
        groups = {}
        for p in pts:
            groups.setdefault((p["shape"] != "square", p["m"], p["n"], p["k"], p["shape"]), []).append(p)
        for key in sorted(groups):
            runs = groups[key]
            times = sorted(p["t"] for p in runs)
            median = times[len(times) // 2] if len(times) % 2 else 0.5 * (
                times[len(times) // 2 - 1] + times[len(times) // 2])
            p = runs[0]
            t, compute = gpu.time_s(p, af, ak_)
            free = gpu.time_s(p, f, k)[0]
            catalog = gpu.time_s(p, cat_f, cat_k)[0]
            print(f"  {p['shape']:10} {p['m']:5d} {p['n']:6d} {p['k']:6d} {len(runs):4d} "
                  f"{median * 1e6:9.1f} {times[-1] / times[0] - 1:6.1%} {t * 1e6:9.1f} "
                  f"{'compute' if compute >= t else 'memory':>7} {median / t:8.3f} "
                  f"{median / free:6.3f} {median / catalog:7.3f}")


def fit_fixed_k(gpu, points, overhead_k):
    best = None
    lo, hi, step = 0.3, 1.2, 0.01
    for _ in range(3):
        for i in range(int(round((hi - lo) / step)) + 1):
            f = lo + i * step
            c = cost(gpu, points, f, overhead_k)
            if best is None or c < best[0]:
                best = (c, f)
        lo, hi, step = best[1] - 2 * step, best[1] + 2 * step, step / 10
    return best[1], overhead_k, math.sqrt(best[0] / len(points))


if __name__ == "__main__":
    main()
