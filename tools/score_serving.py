#!/usr/bin/env python3
"""Scores shardwise against measured serving points (data/validation/serving-h100.csv, or any
CSV of its columns: each row runs on the cluster of its `system` column, PARTS).

For every aggregated row whose model and layout shardwise can express, runs
`shardwise simulate --concurrency C` (a closed loop of C clients, as the benchmark that produced
the row) with the row's engine profile (the newest built-in version at or below the row's),
format, layout and lengths, and the workload of the harness that measured it where its source
says which (HARNESSES; otherwise AIConfigurator's recipe: fixed lengths, 20 requests per
client), every request measured from the clients' first burst, as the harnesses measure, and compares
the simulated mean TTFT
and TPOT with the measured ones: error = predicted mean / measured - 1, and how often the
measurement lies in the prediction's stated band (its "low" to "high"). Prints coverage (and why
rows are not expressible) and the median / p90 |error| by engine, model, layout kind and
concurrency, the closed-loop identity per engine (closed_loop_identity), and how far apart the
file's own repeats of one configuration are (the floor they set on any model's error).
Disaggregated rows run as `simulate --prefill-layout ... --decode-layout ...` with the row's worker counts and concurrency
(what a row does not record is assumed and reported) and are tabled apart ("<engine> disagg").

Usage: tools/score_serving.py [--binary build/shardwise] [--csv FILE] [--markdown] [--limit N]
       [--every K] [--aggregated-only] [--max-tpot-median F --max-ttft-median F]
       [--simulate-args "OPTIONS"] [--details FILE]
With the bounds, exits 1 if any engine's median |error| exceeds them (the CTest
ServingValidation.ErrorBoundsPerEngine runs this on every second aggregated row). Only the
Python standard library is used.
"""
import argparse
import collections
import csv
import functools
import json
import os
import re
import shlex
import statistics
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# What may follow a catalog model's name in a repository of that model: instruction tuning,
# formats, dates and the size tags some repositories repeat (Llama-4-Maverick-17B-128E).
VARIANT_PART = re.compile(r"instruct|chat|hf|base|it|thinking|terminus|exp|dynamic|fp8|fp4|"
                          r"nvfp4|mxfp4|bf16|awq|gptq|int4|int8|w4a16|w8a8|\d{4}|\d+b|\d+e|"
                          r"a\d+b")
# Repositories of a catalog model's architecture under another name, by the leading part of their
# lowercase name: DeepSeek-V3.1 keeps V3's config.json architecture (671B, MLA, 256 experts);
# Kimi-K2's text model is the one Kimi-K2.5 adds its vision encoder to.
ALIASES = {"deepseek-v3.1": "deepseek-v3", "kimi-k2-": "kimi-k2.5"}
# Hugging Face repository -> why the catalog cannot read it (none today).
UNREADABLE = {}
MODELS_DIR = os.path.join(ROOT, "data", "models")
ENGINES_DIR = os.path.join(ROOT, "data", "engines")
# GPU parts by a name their spelling contains (AIConfigurator's `system`: h100_sxm, gb200_sxm;
# MLPerf's accelerator: "NVIDIA B300-SXM-288GB", "AMD Instinct MI355X"), most specific first
# (gb200 before b200, h200 before h20): (name, label, shardwise cluster, GPUs per node for
# --nodes). OTHER_PARTS names contain a known one but are another part: GH200 (96-144 GB), the
# PCIe cards (the L40S's cluster is PCIe) and the H100 and H200 NVL cards (not the NVL72 racks).
PARTS = [("gb300", "GB300", "gb300-nvl72", 72), ("gb200", "GB200", "gb200-nvl72", 72),
         ("b300", "B300", "dgx-b300", 8), ("b200", "B200", "dgx-b200", 8),
         ("h200", "H200", "dgx-h200", 8), ("h100", "H100", "dgx-h100", 8),
         ("h800", "H800", "hgx-h800", 8), ("h20", "H20", "hgx-h20", 8),
         ("a100", "A100", "dgx-a100", 8), ("l40s", "L40S", "l40s-pcie-8", 8),
         ("mi355x", "MI355X", "mi355x-8", 8), ("mi325x", "MI325X", "mi325x-8", 8),
         ("mi300x", "MI300X", "mi300x-8", 8),
         ("rtx pro 6000", "RTX PRO 6000", "rtx-pro-6000-8", 8)]
OTHER_PARTS = re.compile(r"gh200|pcie|h[12]00[-_ ]?nvl")


def part_of(text):
    """(label, shardwise cluster, GPUs per node) of the part `text` names, or None where the
    catalog has no cluster of it."""
    low = text.lower()
    if OTHER_PARTS.search(low) and "l40s" not in low:
        return None
    return next((part[1:] for part in PARTS if part[0] in low), None)


# How a measurement set was collected, recognised by its source column (closed-loop-ttft.md,
# section 8). InferenceX (InferenceMAX) runs vLLM's benchmark_serving.py with --dataset-name
# random --random-range-ratio 0.8 (each prompt and output length drawn uniformly from 80-100% of
# the nominal one, so the clients drift out of phase) and --num-prompts 10 x C, all measured,
# after --num-warmups 2 x C gathered before the run starts; its rows carry the fields of its
# results database (source_file=<date>.csv ... wip=, or db-dump/... workflow_run_id=).
# AIConfigurator's own recipe (every other row) runs aiperf at fixed lengths, --num-requests 20 x C
# after --warmup-request-count 2 x C (bench_run.sh.j2); aiperf runs its credit phases one after
# another and starts profiling once every warm-up credit has returned (aiperf/timing, the credit
# issuing strategy's phase loop), so its measured requests, too, start from a burst of C.
RANGE_RATIO = 0.8  # InferenceX's --random-range-ratio: lengths uniform in [0.8, 1] x nominal
HARNESSES = {
    "InferenceX": {
        "match": re.compile(r"(^|; )(wip=|workflow_run_id=)|^db-dump/"),
        "length_scale": (1 + RANGE_RATIO) / 2,
        # The coefficient of variation of a uniform draw on [r, 1]: (1 - r) / sqrt(12) / mean.
        "length_cv": (1 - RANGE_RATIO) / (12 ** 0.5) / ((1 + RANGE_RATIO) / 2),
        "requests_per_client": 10,
        # Its launch scripts set no KV-cache format, so an engine stores the cache in its own
        # default: vLLM's --kv-cache-dtype "auto" uses the model's data type (vLLM engine
        # arguments: 'If "auto", will use model data type'), bf16 beside FP8 or MXFP4 weights.
        # The rows say so: Llama-3.1-70B FP8 at TP2 with 64 clients (1k/8k and 8k/1k tokens)
        # queued for 31 and 59 s; with an fp8 cache the model holds all 64 (TTFT 0.3 and 4.3 s),
        # with a bf16 one it queues them (29 s and 55 s) (docs/validation/serving-under-load.md).
        # Its SGLang and TensorRT-LLM rows (disaggregated DeepSeek-R1) keep the rule: none tells.
        "kv_by_engine": {"vllm": "bf16"},
    },
}
# AIConfigurator's recipe: --num-requests 20 x C (bench_run.sh.j2; closed-loop-ttft.md section 8).
AICONFIGURATOR_REQUESTS_PER_CLIENT = 20


def cluster_of(row):
    """(shardwise cluster, GPUs per node) of the row's `system` (DGX H100 where the data has no
    such column), or None where the catalog has no cluster of it."""
    part = part_of(row.get("system") or "h100_sxm")
    return part[1:] if part else None


@functools.lru_cache(maxsize=None)
def catalog_model(hf):
    """The catalog model of a Hugging Face repository: the longest leading part of the
    repository's name that names a model file (Qwen/Qwen3-32B -> qwen3-32b,
    Llama-4-Maverick-17B-128E-Instruct-FP8 -> llama-4-maverick, DeepSeek-R1-0528 -> deepseek-r1),
    else an ALIASES architecture; None if neither."""
    parts = hf.split("/")[-1].lower().split("-")
    for n in range(len(parts), 0, -1):
        name = "-".join(parts[:n])
        if os.path.exists(os.path.join(MODELS_DIR, name + ".json")):
            # Only if what is left names a variant of that model, not another model built from
            # it (DeepSeek-R1-Distill-Llama-70B is a Llama, gpt2-xl is not gpt2).
            if all(VARIANT_PART.fullmatch(p) for p in parts[n:]):
                return name
            return None
    lower = hf.split("/")[-1].lower() + "-"
    return next((model for prefix, model in ALIASES.items() if lower.startswith(prefix)), None)


@functools.lru_cache(maxsize=None)
def model_config(model):
    """The catalog model's config.json text."""
    with open(os.path.join(MODELS_DIR, model + ".json"), encoding="utf-8") as f:
        return f.read()


def is_moe(model):
    """Whether the catalog model routes tokens to experts (its config names experts per token)."""
    return "num_experts_per_tok" in model_config(model)


def checkpoint_quant(model):
    """The quantization method of the model's own checkpoint ("mxfp4", "fp8", ...), or None."""
    m = re.search(r'"quant_method":\s*"([^"]+)"', model_config(model))
    return m.group(1) if m else None


# The columns every row is read by (data/validation/serving-h100.md describes them); `system` and
# `backend_version` are optional, and disaggregated rows also need DISAGG_COLUMNS.
COLUMNS = ("id", "silicon_data_source", "backend", "model_path", "mode", "isl", "osl",
           "batch_size", "tp_size", "pp_size", "attention_dp_size", "moe_ep_size", "precision",
           "silicon_ttft_ms", "silicon_tpot_ms")
DISAGG_COLUMNS = tuple(f"{pool}_{field}" for pool in ("prefill", "decode")
                       for field in ("num_workers", "tp_size", "pp_size", "attention_dp_size",
                                     "moe_ep_size"))


def read_rows(path, columns, tool, columns_if=None):
    """The CSV's rows as dicts; a missing file or column is one line on stderr and exit 2.
    `columns_if`: (predicate, more columns) the file needs where a row satisfies it."""
    try:
        with open(path, newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        sys.stderr.write(f"{tool}: error: cannot read {path}: {e}\n")
        sys.exit(2)
    header = set(rows[0]) if rows else set()
    if columns_if and header.issuperset(columns) and any(columns_if[0](r) for r in rows):
        columns = tuple(columns) + tuple(columns_if[1])
    missing = [c for c in columns if c not in header]
    if not rows or missing:
        what = "no rows" if not rows else "no column " + ", ".join(missing)
        sys.stderr.write(f"{tool}: error: {path} has {what}; give a CSV with the columns of "
                         f"the data it scores (its --csv default)\n")
        sys.exit(2)
    return rows


def checked_command(command, row, *args):
    """command(row, *args), or (None, why) where a value of the row is not a number it needs."""
    try:
        return command(row, *args)
    except ValueError as e:
        return None, f"a value that is not a number ({e})"


def to_int(text, default=1):
    return int(text) if text not in ("", None) else default


def harness_of(row):
    """The HARNESSES entry that measured `row`, or None (fixed lengths, simulate's steady state)."""
    for harness in HARNESSES.values():
        if harness["match"].search(row.get("silicon_data_source", "")):
            return harness
    return None


def mean_output_tokens(row):
    """The row's mean output length as its harness drew it."""
    harness = harness_of(row)
    return int(row["osl"]) * (harness["length_scale"] if harness else 1)


def workload_args(row, concurrency):
    """simulate's lengths and request count for the row's harness: every request measured, from
    the burst the harness's clients start with."""
    harness = harness_of(row)
    per_client = harness["requests_per_client"] if harness else AICONFIGURATOR_REQUESTS_PER_CLIENT
    requests = ["--requests", str(per_client * concurrency)]
    if harness is None:
        return ["--isl", row["isl"], "--osl", row["osl"], *requests]
    scale = harness["length_scale"]
    return ["--isl", str(round(int(row["isl"]) * scale)),
            "--osl", str(round(int(row["osl"]) * scale)),
            "--isl-dist", "uniform", "--osl-dist", "uniform",
            "--length-cv", f"{harness['length_cv']:.4f}", *requests]


def version_key(text):
    """(major, minor) of a version string such as '0.18.0' or '1.0.0rc3'; None if it has none."""
    m = re.search(r"(\d+)\.(\d+)", text or "")
    return (int(m.group(1)), int(m.group(2))) if m else None


@functools.lru_cache(maxsize=None)
def profile_versions(backend):
    """The built-in profiles of `backend` (data/engines/<backend>-<version>.json), as
    ((major, minor), name) oldest first; read once per backend."""
    names = [name[:-len(".json")] for name in os.listdir(ENGINES_DIR)
             if name.startswith(backend + "-") and name.endswith(".json")]
    keyed = [(version_key(n[len(backend) + 1:]), n) for n in names]
    return sorted((key, n) for key, n in keyed if key is not None)


def engine_profile(backend, version):
    """The built-in profile of `backend` for `version`: the newest at or below it; the oldest
    where the version is older than every profile or not recorded."""
    backend = backend.lower()
    versions = profile_versions(backend)
    if not versions:
        return backend
    wanted = version_key(version)
    below = [name for key, name in versions if wanted is not None and key <= wanted]
    return below[-1] if below else versions[0][1]


def weight_format(row, model):
    """The weight format shardwise computes with, and the KV format the engine serves: the
    data's rule (FP8 and FP4 checkpoints serve an fp8 cache, serving-h100.md) unless the row's
    harness launched the engine with its own default (HARNESSES' kv_by_engine). An FP4 row is
    MXFP4 where the model's own checkpoint is (gpt-oss), else NVFP4 (shardwise's fp4)."""
    p = row["precision"]
    harness = harness_of(row) or {}
    harness_kv = harness.get("kv_by_engine", {}).get(row.get("backend", "").lower())
    if p == "fp8":
        return "fp8", harness_kv or "fp8"
    if p == "fp4":
        # gpt-oss ships MXFP4 MoE weights (the row's 'nvfp4' label is the dump's); on Hopper the
        # engines dequantise them to bf16 (no FP4 tensor cores). FP4 checkpoints serve fp8 KV.
        return ("mxfp4" if checkpoint_quant(model) == "mxfp4" else "fp4"), harness_kv or "fp8"
    return "bf16", "bf16"


def layout_of(row, model, prefix=""):
    """The shardwise layout of a worker and its GPUs, from the row's `prefix`-ed columns."""
    tp = to_int(row[prefix + "tp_size"])
    pp = to_int(row[prefix + "pp_size"])
    adp = to_int(row[prefix + "attention_dp_size"])
    if not is_moe(model):
        return f"tp{tp}" + (f"pp{pp}" if pp > 1 else ""), tp * pp
    # A blank or zero expert width (vLLM's disaggregated rows) spreads the experts over all the
    # worker's ranks: expressed as EP over them.
    ep = to_int(row[prefix + "moe_ep_size"], 0) or (1 if adp == 1 else adp * tp)
    text = (f"dp{adp}" if adp > 1 else "") + f"tp{tp}" + (f"ep{ep}" if ep > 1 else "")
    return text + (f"pp{pp}" if pp > 1 else ""), tp * pp * adp


def concurrency_of(row):
    """The benchmark's concurrency, or None where the row does not record it. A disaggregated
    row's decode batch is a limit, not the load: the rows that record only it run well below it
    (TPOT under the HBM time of a full batch), so it is not taken for the concurrency."""
    m = re.search(r"silicon_concurrency=(\d+)", row["silicon_data_source"])
    if m:
        return int(m.group(1))
    m = re.search(r"_c(\d+)_", row["id"])
    return int(m.group(1)) if m else None


def disaggregated_command(row, binary, model, dtype, kv, cluster):
    """(argv, what was assumed or None) for a disaggregated row, or (None, why not). A pool
    whose worker count the row lacks gets 1 worker (run_row then adds the fewest decode workers
    that hold the load, as simulate suggests)."""
    concurrency = concurrency_of(row)
    if concurrency is None:
        return None, "disaggregated: the benchmark's concurrency is not recorded"
    prefill, prefill_gpus = layout_of(row, model, "prefill_")
    decode, decode_gpus = layout_of(row, model, "decode_")
    notes = []
    workers = []
    for pool in ("prefill", "decode"):
        n = to_int(row[pool + "_num_workers"], 0)
        if not n:
            n = 1
            notes.append(f"{pool} workers not recorded: 1 prefill worker, the fewest decode "
                         "workers that hold the load")
        workers.append(n)
    gpus = workers[0] * prefill_gpus + workers[1] * decode_gpus
    nodes = -(-gpus // cluster[1])
    argv = [binary, "simulate", "--model", model, "--cluster", cluster[0], "--nodes", str(nodes),
            "--prefill-layout", prefill, "--decode-layout", decode,
            "--prefill-workers", str(workers[0]), "--decode-workers", str(workers[1]),
            "--engine", engine_profile(row["backend"], row.get("backend_version", "")),
            "--dtype", dtype, "--kv-dtype", kv, *workload_args(row, concurrency),
            "--concurrency", str(concurrency), "--json"]
    return argv, notes[0] if notes else None


def row_command(row, binary):
    """(argv, None) for an expressible row, (argv, what was assumed) for a disaggregated row that
    lacks worker counts or concurrency, or (None, why not)."""
    hf = row["model_path"]
    if hf in UNREADABLE:
        return None, UNREADABLE[hf]
    model = catalog_model(hf)
    if model is None:
        return None, f"model {hf} not in the catalog"
    cluster = cluster_of(row)
    if cluster is None:
        return None, f"system {row['system']} has no cluster in the catalog"
    dtype, kv = weight_format(row, model)
    if row["mode"] == "disagg":
        return disaggregated_command(row, binary, model, dtype, kv, cluster)
    layout, gpus = layout_of(row, model)
    concurrency = to_int(row["batch_size"]) * to_int(row["attention_dp_size"])
    note = None
    ran = inflated_layout(row)
    if ran:
        # The data's description: some sources store an inflated width; the id's layout ran.
        tp, _, ep = ran
        layout = f"tp{tp}" + (f"ep{ep}" if ep > 1 and is_moe(model) else "")
        gpus = tp
        concurrency = concurrency_of(row)
        if concurrency is None:
            return None, "aggregated: an inflated width and no concurrency in the id"
        note = ("aggregated: the layout and concurrency in the row's id (its columns store an "
                "inflated width)")
    argv = [binary, "simulate", "--model", model, "--cluster", cluster[0], "--gpus", str(gpus),
            "--layout", layout,
            "--engine", engine_profile(row["backend"], row.get("backend_version", "")),
            "--dtype", dtype, "--kv-dtype", kv, *workload_args(row, concurrency),
            "--concurrency", str(concurrency), "--json"]
    return argv, note


def inflated_layout(row):
    """(tp, attention dp = 1, ep) named by the id of an aggregated row whose columns store a wider
    worker than that ('..._tp4_ep4_...' with tp 4 x attention DP 4 in the columns), or None: the
    data's description says such rows ran the id's layout. A row whose columns agree with its id,
    or are narrower, keeps its columns."""
    m = re.search(r"_tp(\d+)(?:_\d+)?_ep(\d+)(?:_|$)", row["id"])
    if not m or row["mode"] != "agg":
        return None
    tp, ep = int(m.group(1)), int(m.group(2))
    width = to_int(row["tp_size"]) * to_int(row["attention_dp_size"])
    return (tp, 1, ep) if width > tp else None


def concurrency_band(concurrency):
    """The band of a benchmark's concurrency in the tables: fixed costs show at low concurrency,
    queueing at high."""
    return "c<=8" if concurrency <= 8 else ("c16-32" if concurrency <= 32 else "c>=64")


def layout_kind(row):
    moe = is_moe(catalog_model(row["model_path"]))
    if row["mode"] == "disagg":
        return "disaggregated " + ("moe" if moe else "dense")
    if not moe:
        return "dense tp"
    ran = inflated_layout(row)
    adp = ran[1] if ran else to_int(row["attention_dp_size"])
    return "moe attention-dp" if adp > 1 else "moe tp+ep"


def engine_and_band(scored):
    """The table group of a scored row by engine and the benchmark's concurrency."""
    argv = scored["argv"]
    return f"{engine_key(scored)} {concurrency_band(int(argv[argv.index('--concurrency') + 1]))}"


def engine_key(scored):
    """The table group of a scored row: its engine, disaggregated rows apart."""
    r = scored["row"]
    return r["backend"] + (" disagg" if r["mode"] == "disagg" else "")


def dedupe(rows):
    """Some rows repeat another row's measurement (to the last printed digits): count each
    measurement once."""
    seen, out = set(), []
    for r in rows:
        key = (r.get("system"), r["backend"], r["model_path"], r["mode"], r["isl"], r["osl"],
               r["batch_size"],
               r["tp_size"], r["attention_dp_size"], f"{float(r['silicon_ttft_ms']):.9g}",
               f"{float(r['silicon_tpot_ms']):.9g}")
        if key not in seen:
            seen.add(key)
            out.append(r)
    return out


def repeat_spread(jobs):
    """Per mode: rows whose simulations are identical (the same inputs as far as the row records
    them) but whose measurements differ. Returns {mode: (groups, distinct measurements in them,
    median max/min TTFT, median max/min TPOT, median floor of |TPOT error|)}: for measurements
    a <= b no single prediction is within (b - a) / (b + a) of both, the floor any model has on
    them."""
    groups = collections.defaultdict(set)
    for r, argv in jobs:
        groups[(r["mode"], tuple(argv))].add(
            (float(r["silicon_ttft_ms"]), float(r["silicon_tpot_ms"])))
    spread = collections.defaultdict(list)
    for (mode, _), values in groups.items():
        if len(values) < 2:
            continue
        ttft = [v[0] for v in values]
        tpot = [v[1] for v in values]
        spread[mode].append((max(ttft) / min(ttft), max(tpot) / min(tpot),
                             (max(tpot) - min(tpot)) / (max(tpot) + min(tpot)), len(values)))
    return {mode: (len(v), sum(x[3] for x in v), statistics.median(x[0] for x in v),
                   statistics.median(x[1] for x in v), statistics.median(x[2] for x in v))
            for mode, v in spread.items()}


def with_options(argv, extra):
    """`argv` with the options of `extra` added, each replacing the same option of `argv` (a
    harness's --osl-dist, say) and its value, where it has one (--json has none)."""
    given = {word for word in extra if word.startswith("--")}
    out, i = [], 0
    while i < len(argv):
        if argv[i] in given:
            has_value = i + 1 < len(argv) and not argv[i + 1].startswith("--")
            i += 2 if has_value else 1
        else:
            out.append(argv[i])
            i += 1
    return out + extra


def run(argv):
    p = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        return None, p.stderr.strip().splitlines()[-1] if p.stderr.strip() else "failed"
    return json.loads(p.stdout), None


def run_row(row, argv):
    """Runs a row's simulation; a disaggregated row without a recorded decode worker count is
    rerun with the fewest decode workers that simulate says hold the load."""
    out, err = run(argv)
    m = re.search(r"use --decode-workers (\d+) or more", err or "")
    if out is None and m and not to_int(row["decode_num_workers"], 0):
        argv = argv[:]
        model = catalog_model(row["model_path"])
        workers = [int(argv[argv.index("--prefill-workers") + 1]), int(m.group(1))]
        argv[argv.index("--decode-workers") + 1] = str(workers[1])
        gpus = (workers[0] * layout_of(row, model, "prefill_")[1] +
                workers[1] * layout_of(row, model, "decode_")[1])
        argv[argv.index("--nodes") + 1] = str(-(-gpus // cluster_of(row)[1]))
        out, err = run(argv)
    return out, err


def in_band(latency, measured_s):
    """Whether a measurement lies in the prediction's stated band ("low" to "high"), or None
    where the prediction states none."""
    if "low" not in latency or "high" not in latency:
        return None
    return latency["low"] <= measured_s <= latency["high"]


def share_in_band(scored, key):
    """The share of the rows whose measurement lies in the stated band, as text."""
    flags = [s[key] for s in scored if s[key] is not None]
    return f"{100 * sum(flags) / len(flags):.0f}%" if flags else "-"


def closed_loop_identity(row, argv, out, ttft_ms, tpot_ms):
    """The closed-loop identity, mean TTFT = C / X - (OSL - 1) x mean TPOT - client delay
    (docs/validation/serving-under-load.md, "The closed-loop identity, row by row"), read per
    row: the end-to-end error (in a saturated closed loop, -1 x the throughput error), the TTFT
    error the TPOT error alone accounts for were the throughput right, -(OSL - 1) x dTPOT / TTFT,
    and the simulated
    cycle's residual C / X - E2E. The simulator's front end (request path, tokenization) lies
    inside its TTFT, so the residual is zero for a saturated loop measured whole; a large one says
    the simulated loop idles between requests or its window is not its steady state. A run of a
    fixed request count (a harness's: --requests) drains at its end, so it has no residual. The
    measured E2E is TTFT + (OSL - 1) x TPOT (the file records no E2E); the simulated one is the
    simulation's own mean where it states one."""
    osl = mean_output_tokens(row)
    measured_ttft, measured_tpot = float(row["silicon_ttft_ms"]), float(row["silicon_tpot_ms"])
    e2e_ms = out.get("e2e_s", {}).get("mean", 0) * 1e3 or ttft_ms + (osl - 1) * tpot_ms
    measured_e2e = measured_ttft + (osl - 1) * measured_tpot
    clients = int(argv[argv.index("--concurrency") + 1])
    rate = out.get("throughput", {}).get("requests_per_s", 0)
    return {
        "e2e_err": e2e_ms / measured_e2e - 1,
        "ttft_err_from_tpot": -(osl - 1) * (tpot_ms - measured_tpot) / measured_ttft,
        # A fixed request count (a harness's) drains at the end: its loop is not saturated.
        "cycle_residual_ms": (1e3 * clients / rate - e2e_ms
                              if rate > 0 and "--requests" not in argv else None),
    }


def print_identity(scored, markdown):
    """Per engine: the medians of closed_loop_identity's readings beside the TTFT error."""
    by = collections.defaultdict(list)
    for s in scored:
        by[engine_key(s)].append(s)
    header = ["closed-loop identity", "rows", "E2E median signed", "TTFT median signed",
              "TTFT error the TPOT error accounts for (median)",
              "simulated cycle residual median (ms)"]
    print()
    if markdown:
        print("| " + " | ".join(header) + " |")
        print("|" + "---|" * len(header))
    else:
        print(f"{'closed-loop identity':36s} {'rows':>12s} {'E2E bias':>12s} "
              f"{'TTFT bias':>12s} {'from TPOT':>12s} {'residual ms':>12s}")
    for name in sorted(by):
        ss = by[name]
        residuals = [s["cycle_residual_ms"] for s in ss if s["cycle_residual_ms"] is not None]
        cells = [name, str(len(ss))] + [
            f"{100 * statistics.median(s[k] for s in ss):+.1f}%"
            for k in ("e2e_err", "ttft_err", "ttft_err_from_tpot")] + [
            f"{statistics.median(residuals):.1f}" if residuals else "-"]
        print("| " + " | ".join(cells) + " |" if markdown else
              f"{cells[0]:36s} " + " ".join(f"{c:>12s}" for c in cells[1:]))


def summary(errors):
    a = sorted(abs(e) for e in errors)
    if not a:
        return "-", "-"
    p90 = a[min(len(a) - 1, int(round(0.9 * (len(a) - 1))))]
    return f"{100 * statistics.median(a):.1f}%", f"{100 * p90:.1f}%"


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", default=os.path.join(ROOT, "build", "shardwise"),
                    help="the shardwise binary (default: %(default)s)")
    ap.add_argument("--csv", default=os.path.join(ROOT, "data", "validation", "serving-h100.csv"),
                    help="measured points (default: %(default)s)")
    ap.add_argument("--markdown", action="store_true", help="print Markdown tables")
    ap.add_argument("--limit", type=int, default=0, help="score only the first N rows")
    ap.add_argument("--every", type=int, default=1, help="score every K-th distinct row")
    ap.add_argument("--max-tpot-median", type=float,
                    help="fail if an engine's TPOT median |error| exceeds this fraction")
    ap.add_argument("--max-ttft-median", type=float,
                    help="fail if an engine's TTFT median |error| exceeds this fraction")
    ap.add_argument("--max-disagg-tpot-median", type=float,
                    help="the same bound for an engine's disaggregated rows")
    ap.add_argument("--max-disagg-ttft-median", type=float,
                    help="the same bound for an engine's disaggregated rows")
    ap.add_argument("--simulate-args", default="",
                    help="extra options for every simulation, e.g. \"--osl-dist uniform "
                         "--length-cv 0.01\" (a what-if: clients out of phase)")
    ap.add_argument("--jobs", type=int, default=2,
                    help="simulations run at once (default: %(default)s)")
    ap.add_argument("--details", help="write per-row results to this CSV")
    ap.add_argument("--aggregated-only", action="store_true",
                    help="score only the aggregated rows (the CTest guard: the disaggregated ones "
                         "are reported here, not bounded)")
    args = ap.parse_args()
    if not os.path.exists(args.binary):
        sys.exit(f"score_serving: no shardwise binary at {args.binary}; build it or pass --binary")
    rows = dedupe(read_rows(args.csv, COLUMNS, "score_serving",
                            (lambda r: r["mode"] == "disagg", DISAGG_COLUMNS)))
    if args.limit:
        rows = rows[: args.limit]
    if args.aggregated_only:
        rows = [r for r in rows if r["mode"] != "disagg"]
    rows = rows[:: max(1, args.every)]
    jobs, skipped, assumed = [], collections.Counter(), collections.Counter()
    for r in rows:
        argv, why = checked_command(row_command, r, args.binary)
        if argv is None:
            skipped[why] += 1
        else:
            jobs.append((r, with_options(argv, shlex.split(args.simulate_args))))
            if why:
                assumed[why] += 1
    with ThreadPoolExecutor(args.jobs) as pool:
        results = list(pool.map(lambda j: run_row(*j), jobs))
    scored, failed = [], collections.Counter()
    for (r, argv), (out, err) in zip(jobs, results):
        if out is None:
            failed[err] += 1
            continue
        ttft = out["ttft_s"]["mean"] * 1e3
        tpot = out["tpot_s"]["mean"] * 1e3
        scored.append({
            "row": r, "argv": argv, "ttft_ms": ttft, "tpot_ms": tpot,
            "ttft_err": ttft / float(r["silicon_ttft_ms"]) - 1,
            "tpot_err": tpot / float(r["silicon_tpot_ms"]) - 1,
            "ttft_in_band": in_band(out["ttft_s"], float(r["silicon_ttft_ms"]) * 1e-3),
            "tpot_in_band": in_band(out["tpot_s"], float(r["silicon_tpot_ms"]) * 1e-3),
            **closed_loop_identity(r, argv, out, ttft, tpot),
        })
    for mode, name in (("agg", "aggregated"), ("disagg", "disaggregated")):
        total = sum(1 for r in rows if r["mode"] == mode)
        expressible = sum(1 for r, _ in jobs if r["mode"] == mode)
        done = sum(1 for s in scored if s["row"]["mode"] == mode)
        print(f"{name} rows: {total} distinct measurements; expressible: {expressible}; "
              f"scored: {done} (coverage {100 * done / max(1, expressible):.1f}% of expressible)")
    for why, n in skipped.most_common():
        print(f"  not expressible ({n}): {why}")
    for why, n in assumed.most_common():
        print(f"  scored with an assumption ({n}): {why}")
    for why, n in failed.most_common():
        print(f"  failed ({n}): {why}")
    for mode, (n, rows_in, ttft, tpot, floor) in sorted(repeat_spread(jobs).items()):
        print(f"  {mode}: {n} configurations ({rows_in} measurements) measured more than once "
              f"with the same recorded inputs differ by a median {ttft:.2f}x in TTFT and "
              f"{tpot:.2f}x in TPOT (no prediction comes closer than {100 * floor:.0f}% to both "
              "TPOTs of such a pair)")
    groups = [("engine", engine_key),
              # Per GPU and engine where the file holds more than one GPU.
              *([("GPU and engine", lambda s: f"{cluster_of(s['row'])[0]} {engine_key(s)}")]
                if len({cluster_of(s["row"]) for s in scored}) > 1 else []),
              ("model", lambda s: s["row"]["model_path"]),
              ("layout kind", lambda s: layout_kind(s["row"])),
              ("engine and concurrency", engine_and_band)]
    bar = "|" if args.markdown else " "
    for title, key in groups:
        by = collections.defaultdict(list)
        for s in scored:
            by[key(s)].append(s)
        print()
        header = [title, "rows", "TPOT median abs err", "TPOT p90", "TTFT median abs err",
                  "TTFT p90", "TPOT median signed", "TTFT median signed", "TPOT in band",
                  "TTFT in band"]
        if args.markdown:
            print("| " + " | ".join(header) + " |")
            print("|" + "---|" * len(header))
        else:
            print(f"{title:36s} {'rows':>5s} {'TPOT med':>9s} {'TPOT p90':>9s} {'TTFT med':>9s} "
                  f"{'TTFT p90':>9s} {'TPOT bias':>9s} {'TTFT bias':>9s} {'TPOT band':>9s} "
                  f"{'TTFT band':>9s}")
        for name in sorted(by):
            ss = by[name]
            tm, tp = summary([s["tpot_err"] for s in ss])
            fm, fp = summary([s["ttft_err"] for s in ss])
            bias = f"{100 * statistics.median(s['tpot_err'] for s in ss):+.1f}%"
            ttft_bias = f"{100 * statistics.median(s['ttft_err'] for s in ss):+.1f}%"
            bands = [share_in_band(ss, "tpot_in_band"), share_in_band(ss, "ttft_in_band")]
            if args.markdown:
                print(f"| {name} | {len(ss)} | {tm} | {tp} | {fm} | {fp} | {bias} | {ttft_bias} | "
                      f"{bands[0]} | {bands[1]} |")
            else:
                print(f"{name:36s} {len(ss):5d} {tm:>9s} {tp:>9s} {fm:>9s} {fp:>9s} {bias:>9s} "
                      f"{ttft_bias:>9s} {bands[0]:>9s} {bands[1]:>9s}")
    print_identity(scored, args.markdown)
    failures = []
    by_engine = collections.defaultdict(list)
    for s in scored:
        by_engine[engine_key(s)].append(s)
    for engine, ss in sorted(by_engine.items()):
        disagg = ss[0]["row"]["mode"] == "disagg"
        for name, bound, key in (
                ("TPOT", args.max_disagg_tpot_median if disagg else args.max_tpot_median,
                 "tpot_err"),
                ("TTFT", args.max_disagg_ttft_median if disagg else args.max_ttft_median,
                 "ttft_err")):
            median = statistics.median(abs(s[key]) for s in ss)
            if bound is not None and median > bound:
                failures.append(f"{engine}: {name} median |error| {100 * median:.1f}% exceeds "
                                f"the stated {100 * bound:.0f}%")
    if failed and any(b is not None for b in (args.max_tpot_median, args.max_ttft_median,
                                              args.max_disagg_tpot_median,
                                              args.max_disagg_ttft_median)):
        failures.append(f"{sum(failed.values())} expressible rows failed to run")
    if args.details:
        with open(args.details, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["id", "backend", "model", "isl", "osl", "concurrency", "layout",
                        "ttft_ms", "ttft_pred_ms", "tpot_ms", "tpot_pred_ms", "e2e_err",
                        "ttft_err_from_tpot", "cycle_residual_ms"])
            for s in scored:
                r, argv = s["row"], s["argv"]
                layout = (argv[argv.index("--layout") + 1] if "--layout" in argv else
                          "{}P {} + {}D {}".format(*(argv[argv.index(o) + 1] for o in (
                              "--prefill-workers", "--prefill-layout", "--decode-workers",
                              "--decode-layout"))))
                w.writerow([r["id"], engine_key(s), r["model_path"], r["isl"], r["osl"],
                            argv[argv.index("--concurrency") + 1], layout,
                            r["silicon_ttft_ms"], f"{s['ttft_ms']:.3f}", r["silicon_tpot_ms"],
                            f"{s['tpot_ms']:.3f}", f"{s['e2e_err']:.4f}",
                            f"{s['ttft_err_from_tpot']:.4f}",
                            "" if s["cycle_residual_ms"] is None else
                            f"{s['cycle_residual_ms']:.3f}"])
    for f in failures:
        print("score_serving: " + f, file=sys.stderr)
    if failures:
        sys.exit(1)


if __name__ == "__main__":
    main()
