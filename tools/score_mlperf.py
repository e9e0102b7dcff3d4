#!/usr/bin/env python3
"""Scores shardwise's serving predictions against the public MLPerf Inference v5.1 results
(closed division, datacenter, every LLM result: data/validation/mlperf-v5.1-llm.csv and
its notes mlperf-v5.1-llm.md; the benchmarks' length distributions from mlperf-lengths.md).

This script only runs `shardwise simulate` and compares; nothing it computes feeds a profile.
Three catalog numbers are fitted on these rows elsewhere (tools/fit_gpu_mlperf.py): the MI300X
and MI325X FP8 GEMM fractions on their Llama2-70B Offline rows, and their kernel latency on the
MI325X Llama2-70B Interactive rows; every other row is held out.

Each row is mapped to a simulation: model name -> catalog model, accelerator -> catalog cluster
(all of the system's accelerators, via --gpus or --nodes), software -> engine profile
(TensorRT -> trtllm-cpp, TensorRT engines under TensorRT-LLM's C++ executor, or trtllm-1.0, its
PyTorch backend, for DeepSeek-R1; vLLM -> vllm; SGLang -> sglang), weights -> --dtype (FP4/FP8 checkpoints
serve an FP8 KV cache, as the submitters' configs do), and the published tp/pp/ep/attn_dp ->
--layout and batch -> --max-batch (where a row publishes none, simulate picks its own layout; the
`layout` column of --details says which). Rows the catalog cannot express are counted as not
covered, with the reason.

Workload: a trace (`--trace`, CSV arrival_s,input_tokens,output_tokens) written per row from the
benchmark's own length distribution: the quantile function through the published percentiles
(min, p10, p25, p50, p75, p90, p99, max), linear between them, scaled to the published mean
(inputs: the dataset mean; outputs: the median tokens per sample the v5.1 runs generated in that
scenario) and capped at the benchmark's output limit; requests take the quantiles at
(i + 0.5) / N, shuffled with a fixed seed (input and output independently: no per-sample pairs
are public). Server and Interactive (LoadGen's Server scenario) arrive as a Poisson process at
the row's target_qps (conditioned on the count: the last of N arrives at N / target_qps); N is
what LoadGen issues at that rate, at least its 600-s min_duration in whole dataset passes (at
least one), at most --server-requests. Offline puts the
samples LoadGen issues (target_qps x 600 s x 1.1, at least the minimum Offline count, in whole
dataset passes; one query, all at time 0) in the trace and takes the
simulated system's output tokens/s over the whole run.

Server and Interactive are also scored as MLPerf scores them: the highest Poisson rate whose
simulated p99 TTFT and TPOT meet the benchmark's limits (ttft_limit_ms, tpot_limit_ms) without
falling behind, found from target_qps up or down in 25% steps and then by bisection to 2%
(--rate-precision), against target_qps, the rate the submitter's run met them at.

Errors are predicted / measured - 1: TTFT p99 and TPOT p99 (LoadGen's per-sample
(E2E - TTFT) / (n - 1), whose p99 is over samples; simulate's tpot_s is the same per-request
quantity) for Server and Interactive, output tokens/s for Offline. Rows whose measurements repeat
another row's to the last digit (llama2-70b-99 and -99.9 of one run) count once.

--details also carries each Server and Interactive row's measured tokens per step of an engine
instance (tokens_per_step_measured, Little's law on the row's own rate, mean lengths and TPOT
p50: tokens_per_step), a lower bound on the token budget the submitter's engine ran with.

Usage: tools/score_mlperf.py [--binary build/shardwise] [--csv FILE] [--json] [--markdown]
       [--details FILE|-] [--scenarios Server,Interactive,Offline] [--offline-models M,...]
       [--accelerators H200,...] [--jobs N] [--no-max-rate] [--progress]
       [--server-requests N] [--lengths]
Only the Python standard library is used.
"""
import argparse
import collections
import concurrent.futures
import csv
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile

from mlperf_traces import (LENGTHS, MODELS, OFFLINE_REQUESTS, SERVER_REQUESTS, print_lengths,
                           server_requests, write_row_trace, write_trace)
from score_serving import engine_profile  # one rule for the engine profile of a version
from score_serving import part_of, read_rows

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_CSV = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data",
                           "validation", "mlperf-v5.1-llm.csv")

MOE = {"mixtral-8x7b", "deepseek-r1", "gpt-oss-120b"}
# The columns every row is read by (data/validation/mlperf-v5.1-llm.md describes them).
COLUMNS = ("id", "submitter", "system", "model", "scenario", "accelerator", "n_acc", "nodes",
           "software", "weights", "result", "tokps", "ttft_p50_ms", "ttft_p99_ms", "tpot_p50_ms",
           "tpot_p99_ms", "ttft_limit_ms", "tpot_limit_ms", "target_qps", "tp", "pp", "ep",
           "attn_dp", "batch")

# Accelerator (as the CSV writes it) -> (short label, catalog cluster, GPUs per node of it).
ACCELERATORS = {
    "NVIDIA B200-SXM-180GB": ("B200", "dgx-b200", 8),
    "NVIDIA H200-SXM-141GB": ("H200", "dgx-h200", 8),
    "Virtualized NVIDIA H200-SXM-141GB": ("H200", "dgx-h200", 8),
    "NVIDIA H100-SXM-80GB": ("H100", "dgx-h100", 8),
    "NVIDIA GB200": ("GB200", "gb200-nvl72", 72),
    "NVIDIA GB300": ("GB300", "gb300-nvl72", 72),
    "AMD Instinct MI300X 192GB HBM3": ("MI300X", "mi300x-8", 8),
    "AMD Instinct MI325X 256GB HBM3e": ("MI325X", "mi325x-8", 8),
    "NVIDIA RTX PRO 6000 Blackwell Server Edition": ("RTX PRO 6000", "rtx-pro-6000-8", 8),
    "NVIDIA L40S": ("L40S", "l40s-pcie-8", 8),
}
# Accelerators the catalog lacks: short label and why.
UNCOVERED_ACCELERATORS = {
    "NVIDIA H200-NVL-141GB": ("H200 NVL", "H200 NVL (PCIe card, 600 W, 2/4-way NVLink bridges) "
                              "is not in the catalog"),
    "[MAXSUN] MS-Intel Arc Pro B60 Dual 48G Turbo": ("Arc Pro B60", "Intel Arc Pro B60 is not "
                                                     "in the catalog"),
}
# A spelling the table above lacks (a later round's: "NVIDIA B300-SXM-288GB", "AMD Instinct
# MI355X ...") is matched by the part its name contains (score_serving.part_of).
ENGINES = {"TensorRT": "trtllm", "vLLM": "vllm", "SGLang": "sglang"}
# TensorRT rows run TensorRT engines under TensorRT-LLM's C++ executor (data/engines/
# trtllm-cpp.json), but for the models TensorRT-LLM serves only from its PyTorch backend:
# DeepSeek-V3/R1 (MLA and its MoE) has no TensorRT-engine build in TensorRT-LLM
# (examples/models/core/deepseek_v3/README.md runs it through the PyTorch workflow), so those
# rows take the PyTorch backend's profile, trtllm-1.0.
TENSORRT_ENGINE_PROFILE = "trtllm-cpp"
PYTORCH_BACKEND_ONLY = {"deepseek-r1"}
DTYPES = {"fp8": "fp8", "fp4": "fp4", "nvfp4": "fp4", "mxfp4": "mxfp4", "int4": "int4",
          "uint4": "int4"}


def accelerator_of(text):
    """(label, catalog cluster, GPUs per node) of the CSV's accelerator, or None where the
    catalog lacks it (UNCOVERED_ACCELERATORS, a mixed system, an unknown part)."""
    if text in ACCELERATORS:
        return ACCELERATORS[text]
    if text in UNCOVERED_ACCELERATORS or "(x" in text:
        return None
    return part_of(text)


def accelerator_label(text):
    if accelerator_of(text):
        return accelerator_of(text)[0]
    if text in UNCOVERED_ACCELERATORS:
        return UNCOVERED_ACCELERATORS[text][0]
    if "(x" in text:
        return "MI300X+MI325X"
    return text or "(unpublished)"


def engine_label(software):
    first = software.split(" ")[0].rstrip(":,") if software else "(unpublished)"
    return ENGINES.get(first, "Mango LLMBoost" if first == "Mango" else first)


def engine_version(engine, software, model):
    """The engine profile for a row of catalog `model`: where the software names the engine's own
    release (vLLM 0.9.0, SGLang ...), the built-in profile for that version
    (score_serving.engine_profile: the newest at or below it, else the oldest); TensorRT rows
    name TensorRT's release and run its engines under the C++ executor (trtllm-cpp), or the
    PyTorch backend's newest profile where TensorRT-LLM builds no engine of the model."""
    words = software.replace(",", " ").split()
    if engine == "trtllm":
        return engine if model in PYTORCH_BACKEND_ONLY else TENSORRT_ENGINE_PROFILE
    if len(words) < 2:
        return engine
    return engine_profile(engine, words[1])


def tokens_per_step(row):
    """The tokens each engine instance's step holds in a Server or Interactive run, by Little's
    law from the row's own measurements: qps per instance x (mean input + mean output tokens) x
    TPOT p50 (a request spends its prompt's tokens and then one token a step in the batch); an
    instance is tp x pp GPUs (attention data parallel: each GPU). None for Offline rows and rows
    that publish no tp or no TPOT. A lower bound on what the submitter's token budget allowed."""
    if row["scenario"] == "Offline" or not row["tp"] or not row["tpot_p50_ms"]:
        return None
    model = MODELS.get(row["model"])
    if model is None:
        return None
    spec = LENGTHS[model]
    output = spec.get("output_fixed") or spec["output_mean"][row["scenario"]]
    width = 1 if row["attn_dp"] == "True" else int(row["tp"]) * int(row["pp"] or 1)
    gpus = int(row["n_acc"]) * int(row.get("nodes") or 1)  # n_acc counts one node's
    if gpus < width:
        return None
    instances = gpus // width
    return (float(row["target_qps"]) / instances * (spec["input_mean"] + output) *
            float(row["tpot_p50_ms"]) / 1e3)


def layout_of(row, model, gpus):
    """(layout or None, how it was chosen) from the published tp/pp/ep/attn_dp."""
    if not row["tp"]:
        return None, "simulate default"
    tp, pp = int(row["tp"]), int(row["pp"] or 1)
    ep = int(row["ep"] or 1)
    if row["attn_dp"] == "True":
        # Attention data-parallel over each instance's tp GPUs, experts over ep of them.
        return f"dp{gpus}" + (f"ep{ep}" if ep > 1 else ""), "published"
    dp = gpus // (tp * pp)
    text = (f"dp{dp}" if dp > 1 else "") + (f"tp{tp}" if tp > 1 or dp == 1 else "")
    text += (f"ep{ep}" if ep > 1 and model in MOE else "") + (f"pp{pp}" if pp > 1 else "")
    return text, "published"


NUMERIC = ("n_acc", "nodes", "result", "tokps", "ttft_p50_ms", "ttft_p99_ms", "tpot_p50_ms",
           "tpot_p99_ms", "ttft_limit_ms", "tpot_limit_ms", "target_qps", "tp", "pp", "ep",
           "batch")


def not_a_number(row):
    """The first numeric column of the row holding something else (blank is allowed), or None."""
    for column in NUMERIC:
        try:
            if row.get(column) and not math.isfinite(float(row[column])):
                return column
        except ValueError:
            return column
    return None


def row_command(row, binary, trace):
    """(argv, layout note) for a row shardwise can express, or (None, why not)."""
    bad = not_a_number(row)
    if bad:
        return None, f"{bad} {row[bad]!r} is not a number"
    model = MODELS.get(row["model"])
    if model is None:
        return None, f"model {row['model']} not in the catalog"
    acc = row["accelerator"]
    if not acc:
        return None, "accelerator not published"
    if acc in UNCOVERED_ACCELERATORS:
        return None, UNCOVERED_ACCELERATORS[acc][1]
    if "(x" in acc:
        return None, "mixed MI300X + MI325X systems (one cluster has one GPU type)"
    if accelerator_of(acc) is None:
        return None, f"accelerator {acc} is not in the catalog"
    engine = engine_label(row["software"])
    if engine not in ENGINES.values():
        return None, f"engine {engine} has no profile (trtllm, vllm, sglang)"
    dtype = DTYPES.get(row["weights"].lower())
    if dtype is None:
        return None, f"weight format {row['weights']} not in simulate's --dtype"
    _, cluster, per_node = accelerator_of(acc)
    gpus = int(row["n_acc"]) * int(row["nodes"] or 1)
    argv = [binary, "simulate", "--model", model, "--cluster", cluster]
    if per_node == 72 or gpus < per_node:
        argv += ["--gpus", str(gpus)]
    else:
        argv += ["--nodes", str(gpus // per_node)]
    argv += ["--engine", engine_version(engine, row["software"], model), "--dtype", dtype]
    if dtype in ("fp8", "fp4"):
        argv += ["--kv-dtype", "fp8"]
    layout, how = layout_of(row, model, gpus)
    if layout:
        argv += ["--layout", layout]
    if row["batch"]:
        argv += ["--max-batch", row["batch"]]
    argv += ["--trace", trace, "--json"]
    return argv, f"{layout} ({how})" if layout else how


def measured_result(row):
    """The row's tokens/s (a few Interactive rows write Queries/s as the unit of a tokens/s
    number: their tokps column holds the same value)."""
    return float(row["tokps"] or row["result"])


def dedupe(rows):
    """Rows that repeat another row's measurement (llama2-70b-99 and -99.9 of one run) count once."""
    seen, out = set(), []
    for r in rows:
        key = (r["id"], r["system"], MODELS.get(r["model"], r["model"]), r["scenario"],
               r["result"], r["ttft_p99_ms"], r["tpot_p99_ms"])
        if key not in seen:
            seen.add(key)
            out.append(r)
    return out


def median_or_none(values):
    return statistics.median(values) if values else None


def summarise(scored, rows):
    """Per (scenario, accelerator, engine): covered/total and the median absolute and signed
    errors."""
    groups = collections.OrderedDict()
    for r in sorted(rows, key=lambda r: (r["scenario"], accelerator_label(r["accelerator"]),
                                         engine_label(r["software"]))):
        key = (r["scenario"], accelerator_label(r["accelerator"]), engine_label(r["software"]))
        groups.setdefault(key, {"total": 0, "scored": []})["total"] += 1
    for s in scored:
        r = s["row"]
        key = (r["scenario"], accelerator_label(r["accelerator"]), engine_label(r["software"]))
        groups[key]["scored"].append(s)
    out = []
    for (scenario, acc, engine), g in groups.items():
        ss = g["scored"]
        entry = {"scenario": scenario, "accelerator": acc, "engine": engine,
                 "covered": len(ss), "total": g["total"],
                 "overloaded": sum(1 for s in ss if s.get("overloaded"))}
        rates = [x["max_qps_err"] for x in ss if x.get("max_qps_err") is not None]
        entry["max_qps_within_15"] = sum(1 for e in rates if abs(e) <= 0.15)
        entry["max_qps_scored"] = len(rates)
        for key in ("ttft_p99_err", "tpot_p99_err", "throughput_err", "max_qps_err"):
            errs = [s[key] for s in ss if s.get(key) is not None]
            entry[key + "_median_abs"] = median_or_none([abs(e) for e in errs])
            entry[key + "_median_signed"] = median_or_none(errs)
        out.append(entry)
    return out


def pct(x, signed=False):
    if x is None:
        return "-"
    return f"{100 * x:+.0f}%" if signed else f"{100 * x:.0f}%"


def print_table(summary, markdown):
    header = ["scenario", "accelerator", "engine", "covered", "max QPS med abs",
              "max QPS med signed", "max QPS within 15%", "TTFT p99 med abs",
              "TTFT p99 med signed", "TPOT p99 med abs", "TPOT p99 med signed", "tok/s med abs",
              "tok/s med signed", "overloaded"]
    rows = []
    for e in summary:
        within = (f"{e['max_qps_within_15']}/{e['max_qps_scored']}"
                  if e["max_qps_scored"] else "-")
        rows.append([e["scenario"], e["accelerator"], e["engine"], f"{e['covered']}/{e['total']}",
                     pct(e["max_qps_err_median_abs"]), pct(e["max_qps_err_median_signed"], True),
                     within, pct(e["ttft_p99_err_median_abs"]), pct(e["ttft_p99_err_median_signed"], True),
                     pct(e["tpot_p99_err_median_abs"]), pct(e["tpot_p99_err_median_signed"], True),
                     pct(e["throughput_err_median_abs"]),
                     pct(e["throughput_err_median_signed"], True),
                     str(e["overloaded"]) if e["scenario"] != "Offline" else "-"])
    if markdown:
        print("| " + " | ".join(header) + " |")
        print("|" + "---|" * len(header))
        for r in rows:
            print("| " + " | ".join(r) + " |")
    else:
        widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h)
                  for i, h in enumerate(header)]
        print("  ".join(h.ljust(w) for h, w in zip(header, widths)))
        for r in rows:
            print("  ".join(c.ljust(w) for c, w in zip(r, widths)))


def run(argv):
    p = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        lines = p.stderr.strip().splitlines()
        return None, lines[-1] if lines else "failed"
    return json.loads(p.stdout), None


def score_row(row, argv, out):
    load = out.get("load") or {}
    s = {"row": row, "argv": argv, "overloaded": load.get("overloaded"),
         "capacity_rps": load.get("capacity_requests_per_s")}
    if row["scenario"] == "Offline":
        s["throughput"] = out["throughput"]["output_tokens_per_s"]
        s["throughput_err"] = s["throughput"] / measured_result(row) - 1
        return s
    for name, key in (("ttft", "ttft_s"), ("tpot", "tpot_s")):
        for q in ("p50", "p99"):
            pred = out[key][q] * 1e3
            s[f"{name}_{q}_ms"] = pred
            measured = row[f"{name}_{q}_ms"]
            s[f"{name}_{q}_err"] = pred / float(measured) - 1 if measured else None
    return s


def meets_limits(out, row):
    """Whether a simulated Server run meets the row's p99 TTFT and TPOT limits and keeps up."""
    load = out.get("load") or {}
    return (not load.get("overloaded") and
            out["ttft_s"]["p99"] * 1e3 <= float(row["ttft_limit_ms"]) and
            out["tpot_s"]["p99"] * 1e3 <= float(row["tpot_limit_ms"]))


def max_qps(row, argv, trace, model, most, seed, precision):
    """The highest Poisson rate (queries/s) whose simulated p99 TTFT and TPOT meet the row's limits,
    as MLPerf's Server scenario is scored: from the row's target_qps up (or down) in steps of 25%
    until the verdict flips, then bisection to `precision`. Each rate runs as long as LoadGen would
    run it (mlperf_traces.server_requests: 600 s in whole dataset passes, at most `most`
    requests), its lengths drawn from the benchmark's distribution with one seed. Returns (rate or None if none passes down to 1/64 of the target, simulations run)."""
    verdicts = {}

    def passes(q):
        if q not in verdicts:
            write_trace(trace, model, row["scenario"], q, server_requests(LENGTHS[model], q, most),
                        seed)
            out, _ = run(argv)
            verdicts[q] = out is not None and meets_limits(out, row)
        return verdicts[q]

    target = float(row["target_qps"])
    if passes(target):
        lo, hi = target, target * 1.25
        while passes(hi):
            if hi > 64 * target:
                return hi, len(verdicts)
            lo, hi = hi, hi * 1.25
    else:
        lo, hi = target / 1.25, target
        while not passes(lo):
            if lo < target / 64:
                return None, len(verdicts)
            lo, hi = lo / 1.25, lo
    while hi / lo > 1 + precision:
        mid = (lo * hi) ** 0.5
        if passes(mid):
            lo = mid
        else:
            hi = mid
    return lo, len(verdicts)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", default=os.path.join(ROOT, "build", "shardwise"),
                    help="the shardwise binary (default: %(default)s)")
    ap.add_argument("--csv", default=DEFAULT_CSV, help="MLPerf rows (default: %(default)s)")
    ap.add_argument("--json", action="store_true", help="print the summary as JSON")
    ap.add_argument("--markdown", action="store_true", help="print a Markdown table")
    ap.add_argument("--details", help="write per-row results as CSV to this file ('-': stdout)")
    ap.add_argument("--scenarios", default="Server,Interactive,Offline",
                    help="scenarios to score (default: %(default)s)")
    ap.add_argument("--accelerators", default="",
                    help="score only these accelerators, as the tables name them (comma list, "
                         "e.g. H200,B200; default all)")
    ap.add_argument("--offline-models", default="",
                    help="score Offline rows of these MLPerf models only (comma list; default all)")
    ap.add_argument("--server-requests", type=int, default=SERVER_REQUESTS,
                    help="most requests in a Server/Interactive trace (default: %(default)s)")
    ap.add_argument("--offline-requests", type=int, default=OFFLINE_REQUESTS,
                    help="most requests in an Offline trace (default: %(default)s)")
    ap.add_argument("--seed", type=int, default=1, help="trace seed (default: %(default)s)")
    ap.add_argument("--jobs", type=int, default=1,
                    help="rows simulated at once (default: %(default)s)")
    ap.add_argument("--no-max-rate", dest="max_rate", action="store_false",
                    help="skip the search for the highest rate within the limits (Server, "
                         "Interactive)")
    ap.add_argument("--rate-precision", type=float, default=0.02,
                    help="relative precision of that search (default: %(default)s)")
    ap.add_argument("--progress", action="store_true", help="one line on stderr per row")
    ap.add_argument("--lengths", action="store_true",
                    help="print the length mapping of every benchmark and exit")
    args = ap.parse_args()
    if args.lengths:
        print_lengths()
        return
    if not os.path.exists(args.binary):
        sys.exit(f"score_mlperf: no shardwise binary at {args.binary}; pass --binary")
    all_rows = read_rows(args.csv, COLUMNS, "score_mlperf")
    rows = dedupe(all_rows)
    duplicates = len(all_rows) - len(rows)
    scenarios = set(args.scenarios.split(","))
    offline_models = set(filter(None, args.offline_models.split(",")))
    accelerators = set(filter(None, args.accelerators.split(",")))
    rows = [r for r in rows if r["scenario"] in scenarios and
            (r["scenario"] != "Offline" or not offline_models or r["model"] in offline_models) and
            (not accelerators or accelerator_label(r["accelerator"]) in accelerators)]
    skipped, failed, scored = collections.Counter(), collections.Counter(), []

    def score(r, tmp, index):
        """(scored entry, None) or (None, (scenario, error)) for a covered row."""
        trace = os.path.join(tmp, f"trace{index}.csv")
        argv, note = row_command(r, args.binary, trace)
        n = write_row_trace(r, trace, args.server_requests, args.offline_requests, args.seed)
        out, err = run(argv)
        if out is None:
            return None, (r["scenario"], err)
        s = score_row(r, argv, out)
        s["layout"] = note
        s["layout_run"] = out.get("layout")
        s["requests"] = n
        if r["scenario"] != "Offline" and args.max_rate:
            s["max_qps"], s["max_qps_runs"] = max_qps(r, argv, trace, MODELS[r["model"]],
                                                     args.server_requests, args.seed,
                                                     args.rate_precision)
            if s["max_qps"] is not None:
                s["max_qps_err"] = s["max_qps"] / float(r["target_qps"]) - 1
        return s, None

    covered = []
    for r in rows:
        argv, note = row_command(r, args.binary, "trace.csv")
        if argv is None:
            skipped[(r["scenario"], note)] += 1
        else:
            covered.append(r)
    with tempfile.TemporaryDirectory() as tmp, \
            concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        done = 0
        for s, error in pool.map(lambda job: score(job[1], tmp, job[0]), enumerate(covered)):
            done += 1
            if error:
                failed[error] += 1
            else:
                scored.append(s)
            if args.progress:
                print(f"score_mlperf: {done}/{len(covered)} rows", file=sys.stderr)
    summary = summarise(scored, rows)
    if args.json:
        print(json.dumps({"rows": len(rows), "duplicates_counted_once": duplicates,
                          "scored": len(scored),
                          "not_covered": [{"scenario": k[0], "reason": k[1], "rows": v}
                                          for k, v in skipped.most_common()],
                          "failed": [{"scenario": k[0], "error": k[1], "rows": v}
                                     for k, v in failed.most_common()],
                          "groups": summary}, indent=2))
    else:
        print(f"rows: {len(rows)} ({duplicates} repeated measurements counted once); "
              f"scored: {len(scored)}")
        for (scenario, why), n in sorted(skipped.items()):
            print(f"  not covered ({scenario}, {n}): {why}")
        for (scenario, why), n in sorted(failed.items()):
            print(f"  failed ({scenario}, {n}): {why}")
        print()
        print_table(summary, args.markdown)
    if args.details:
        f = sys.stdout if args.details == "-" else open(args.details, "w", newline="")
        w = csv.writer(f)
        w.writerow(["id", "submitter", "model", "scenario", "accelerator", "engine", "layout",
                    "layout_run", "requests", "ttft_p99_ms", "ttft_p99_pred_ms", "tpot_p99_ms",
                    "tpot_p99_pred_ms", "ttft_p50_ms", "ttft_p50_pred_ms", "tpot_p50_ms",
                    "tpot_p50_pred_ms", "tokens_per_s", "tokens_per_s_pred", "overloaded",
                    "target_qps", "capacity_rps_pred", "max_qps_pred", "max_qps_runs",
                    "tokens_per_step_measured"])
        fmt = lambda x: "" if x is None else f"{x:.3f}"
        for s in scored:
            r = s["row"]
            w.writerow([r["id"], r["submitter"], r["model"], r["scenario"],
                        accelerator_label(r["accelerator"]), engine_label(r["software"]),
                        s["layout"], s["layout_run"], s["requests"],
                        r["ttft_p99_ms"], fmt(s.get("ttft_p99_ms")), r["tpot_p99_ms"],
                        fmt(s.get("tpot_p99_ms")), r["ttft_p50_ms"], fmt(s.get("ttft_p50_ms")),
                        r["tpot_p50_ms"], fmt(s.get("tpot_p50_ms")),
                        measured_result(r) if r["scenario"] == "Offline" else "",
                        fmt(s.get("throughput")), s["overloaded"],
                        r["target_qps"], fmt(s.get("capacity_rps")), fmt(s.get("max_qps")),
                        s.get("max_qps_runs", ""), fmt(tokens_per_step(r))])
        if f is not sys.stdout:
            f.close()
    if failed:
        sys.exit(f"score_mlperf: {sum(failed.values())} covered rows failed to run")


if __name__ == "__main__":
    main()
