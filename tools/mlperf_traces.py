"""The traces tools/score_mlperf.py runs MLPerf Inference rows on: each benchmark's catalog model
and length distribution (data/validation/mlperf-lengths.md), LoadGen's Offline sample count and
the Poisson arrivals of Server and Interactive. Shared by tools/score_mlperf.py and
tools/fit_gpu_mlperf.py, so a fitted row runs exactly as it is scored.
Only the Python standard library is used.
"""
import math
import random
import statistics

# MLPerf benchmark -> shardwise catalog model.
MODELS = {
    "llama2-70b-99": "llama-2-70b",
    "llama2-70b-99.9": "llama-2-70b",
    "llama3.1-405b": "llama-3.1-405b",
    "llama3.1-8b": "llama-3.1-8b",
    "mixtral-8x7b": "mixtral-8x7b",
    "deepseek-r1": "deepseek-r1",
    "gpt-oss-120b": "gpt-oss-120b",  # v6.0
}


# Per benchmark (mlperf-lengths.md): quantile knots at KNOT_P of the inputs and the outputs
# (section 2b), the means they are scaled to (input: 2b; output: section 2c, the median tokens
# per sample of the v5.1 runs per scenario), the output cap (2a) and the sample counts (3d).
KNOT_P = (0.0, 0.10, 0.25, 0.50, 0.75, 0.90, 0.99, 1.0)
LENGTHS = {
    "llama-2-70b": {
        # Outputs: the shape of the GPT-4 reference answers (the only per-sample output column),
        # scaled to the ~293 tokens Llama2-70B generates.
        "input": (48, 85, 109, 152, 266, 519, 791, 1021), "input_mean": 222.33,
        "output": (3, 31, 84, 190, 303, 449, 779, 1016),
        "output_mean": {"Offline": 293.0, "Server": 293.3, "Interactive": 292.8},
        "cap": 1024, "samples": 24576, "offline_samples": 24576},
    "llama-3.1-405b": {
        "input": (476, 3678, 5996, 10112, 12281, 14156, 18956, 19988), "input_mean": 9428.64,
        "output": (3, 217, 436, 753, 855, 974, 1174, 1830),
        "output_mean": {"Offline": 653.1, "Server": 655.2, "Interactive": 653.4},
        "cap": 2000, "samples": 8313, "offline_samples": 8313},
    "llama-3.1-8b": {
        # Practically every sample stops at the 128-token cap (section 2c).
        "input": (79, 391, 544, 784, 1109, 1479, 2118, 2540), "input_mean": 870.73,
        "output": None, "output_fixed": 128,
        "cap": 128, "samples": 13368, "offline_samples": 13368},
    "mixtral-8x7b": {
        "input": (35, 112, 154, 283, 660, 701, 1561, 1948), "input_mean": 427.39,
        "output": (2, 47, 74, 113, 179, 279, 582, 1024),
        "output_mean": {"Offline": 143.6, "Server": 143.8, "Interactive": 143.8},
        "cap": 1024, "samples": 15000, "offline_samples": 15000},
    "deepseek-r1": {
        # The 32K-capped reference outputs clipped at the 20,000-token v5.1 cap.
        "input": (52, 124, 479, 901.5, 1088, 1281, 1432, 3140), "input_mean": 803.79,
        "output": (209, 627, 996, 2194, 4913, 9477, 20000, 20000),
        "output_mean": {"Offline": 3662.5, "Server": 3682.5, "Interactive": 3682.5},
        "cap": 20000, "samples": 4388, "offline_samples": 4388},
    "gpt-oss-120b": {
        # v6.0. Its input lengths are not published (no extract of its dataset, section 2b), so
        # the inputs are ASSUMED: DeepSeek-R1's knots and mean, whose dataset draws on the same
        # sources (AIME, GPQA, LiveCodeBench). Outputs: the performance dataset's published mean
        # 1,278.20, min 518, max 3,154 and standard deviation 247.0 (TEST09, section 2a); the
        # shape between is ASSUMED normal: p10, p25, p50, p75, p90, p99 = 1,278.2 + z x 247 for
        # z = -1.2816, -0.6745, 0, 0.6745, 1.2816, 2.3263. Cap 10,240 (README and TEST09).
        "input": (52, 124, 479, 901.5, 1088, 1281, 1432, 3140), "input_mean": 803.79,
        "output": (518, 961.6, 1111.6, 1278.2, 1444.8, 1594.8, 1852.8, 3154),
        "output_mean": {"Offline": 1278.2, "Server": 1278.2, "Interactive": 1278.2},
        "cap": 10240, "samples": 6396, "offline_samples": 6396},
}


def quantile(knots, u):
    """The piecewise-linear quantile function through `knots` at KNOT_P, at u in [0, 1]."""
    for i in range(1, len(KNOT_P)):
        if u <= KNOT_P[i]:
            p0, p1 = KNOT_P[i - 1], KNOT_P[i]
            return knots[i - 1] + (knots[i] - knots[i - 1]) * (u - p0) / (p1 - p0)
    return knots[-1]


def knot_mean(knots):
    """The mean of the distribution whose quantile function is `knots` joined linearly: each
    segment contributes its probability width times its midpoint."""
    return sum((KNOT_P[i] - KNOT_P[i - 1]) * (knots[i - 1] + knots[i]) / 2
               for i in range(1, len(KNOT_P)))


def capped_mean(knots, scale, cap):
    """The mean of min(cap, scale x Q(u)) for u uniform in [0, 1], Q linear between the knots."""
    total = 0.0
    for i in range(1, len(KNOT_P)):
        a, b, w = knots[i - 1] * scale, knots[i] * scale, KNOT_P[i] - KNOT_P[i - 1]
        if b <= cap:
            total += w * (a + b) / 2
        elif a >= cap:
            total += w * cap
        else:  # the segment crosses the cap at fraction t
            t = (cap - a) / (b - a)
            total += w * (t * (a + cap) / 2 + (1 - t) * cap)
    return total


def scale_to_mean(knots, mean, cap):
    """The scale whose capped distribution has `mean` (bisection; without a cap, mean / knot mean)."""
    lo, hi = 0.0, 2 * mean / knot_mean(knots)
    while capped_mean(knots, hi, cap) < mean:
        hi *= 2
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if capped_mean(knots, mid, cap) < mean else (lo, mid)
    return (lo + hi) / 2


def length_mapping(model, scenario):
    """{"input": (knots, scale, cap), "output": (knots, scale, cap) or (None, fixed, cap)}: the
    length distributions of a benchmark's trace, the knots scaled by `scale` to the stated mean."""
    spec = LENGTHS[model]
    out = {"input": (spec["input"], spec["input_mean"] / knot_mean(spec["input"]), None)}
    if spec["output"] is None:
        out["output"] = (None, spec["output_fixed"], spec["cap"])
    else:
        mean = spec["output_mean"][scenario]
        # Scaled so that the mean after the cap is the stated one.
        out["output"] = (spec["output"], scale_to_mean(spec["output"], mean, spec["cap"]),
                         spec["cap"])
    return out


def lengths(knots, scale, cap, n, rng):
    """n lengths: the scaled quantiles at (i + 0.5) / n, rounded, in [1, cap], shuffled."""
    if knots is None:
        values = [int(scale)] * n
    else:
        values = [max(1, round(quantile(knots, (i + 0.5) / n) * scale)) for i in range(n)]
        if cap:
            values = [min(cap, v) for v in values]
    rng.shuffle(values)
    return values


def write_trace(path, model, scenario, qps, n, seed=1):
    """Writes a row's trace; returns (requests, mean input, mean output)."""
    mapping = length_mapping(model, scenario)
    rng = random.Random(seed)
    isl = lengths(*mapping["input"], n, rng)
    osl = lengths(*mapping["output"], n, rng)
    # Poisson arrivals conditioned on their count: exponential gaps scaled so the n-th request
    # arrives at n / qps, so the trace offers exactly the rate asked for.
    gaps = [0.0] * n if scenario == "Offline" else [rng.expovariate(1.0) for _ in range(n)]
    scale = n / qps / sum(gaps) if scenario != "Offline" else 0.0
    t = 0.0
    with open(path, "w") as f:
        f.write("arrival_s,input_tokens,output_tokens\n")
        for a, b, gap in zip(isl, osl, gaps):
            t += gap * scale
            f.write(f"{t:.6f},{a},{b}\n")
    return n, statistics.fmean(isl), statistics.fmean(osl)


MIN_DURATION_S = 600  # LoadGen's min_duration for the datacenter LLM scenarios (mlperf-lengths.md)


def offline_requests(spec, target_qps, most, measured_samples_per_s=0.0):
    """LoadGen's Offline sample count: the expected samples/s (the row's target_qps, a submitter
    setting) x 600 s x 1.1, at least the benchmark's minimum, padded to whole dataset passes
    (equal-issue mode); at most `most`. A valid run also lasted at least min_duration, so its query
    held at least its measured samples/s x 600 (NVIDIA's GB200 DeepSeek-R1 row states a target_qps
    of 10 beside 79 samples/s measured: its 6,600 samples would have ended in 84 s)."""
    want = max(spec["offline_samples"], MIN_DURATION_S * 1.1 * float(target_qps or 0),
               MIN_DURATION_S * measured_samples_per_s)
    passes = -(-int(want) // spec["samples"])
    return min(most, passes * spec["samples"])


SERVER_REQUESTS = 20000  # most requests in a Server/Interactive trace (--server-requests)
OFFLINE_REQUESTS = 150000  # most requests in an Offline trace (--offline-requests)


def write_row_trace(row, path, server_most=SERVER_REQUESTS, offline_most=OFFLINE_REQUESTS,
                    seed=1):
    """Writes the trace a row runs on (Offline: LoadGen's samples at time 0; Server and
    Interactive: Poisson arrivals at target_qps) and returns its request count."""
    model = MODELS[row["model"]]
    spec = LENGTHS[model]
    if row["scenario"] == "Offline":
        per_sample = spec["output_mean"]["Offline"] if spec["output"] else spec["output_fixed"]
        measured = float(row.get("tokps") or row.get("result") or 0) / per_sample
        n = offline_requests(spec, row["target_qps"], offline_most, measured)
        write_trace(path, model, "Offline", None, n, seed)
    else:
        n = server_requests(spec, row["target_qps"], server_most)
        write_trace(path, model, row["scenario"], float(row["target_qps"]), n, seed)
    return n


def server_requests(spec, qps, most):
    """LoadGen's Server query count at `qps` queries/s: Poisson arrivals for at least its
    min_duration (600 s), in whole dataset passes (equal-issue mode, one pass at least); at most
    `most`. A run of one pass at a rate far above the submitter's is over before long requests
    reach their steady state: DeepSeek-R1's 4,388 samples at 27.5 queries/s arrive in 160 s, two
    of its 85-s requests' lives, where LoadGen would have issued four passes (17,552)."""
    passes = max(1, math.ceil(MIN_DURATION_S * float(qps) / spec["samples"]))
    return min(most, passes * spec["samples"])


def print_lengths():
    """The length mapping of every benchmark and scenario (the trace's distributions)."""
    for model, spec in LENGTHS.items():
        for scenario in ("Offline", "Server", "Interactive"):
            m = length_mapping(model, scenario)
            knots, scale, _ = m["input"]
            text = (f"{model} {scenario}: input knot mean {knot_mean(knots):.2f} scale "
                    f"{scale:.4f} mean {knot_mean(knots) * scale:.2f} median "
                    f"{quantile(knots, 0.5) * scale:.1f}")
            knots, scale, cap = m["output"]
            if knots is None:
                text += f"; output fixed {scale}"
            else:
                text += (f"; output knot mean {knot_mean(knots):.3f} scale {scale:.4f} capped "
                         f"mean {capped_mean(knots, scale, cap):.1f} median "
                         f"{quantile(knots, 0.5) * scale:.1f} cap {cap}")
            print(text)
