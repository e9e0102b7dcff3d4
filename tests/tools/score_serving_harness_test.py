#!/usr/bin/env python3
"""score_serving's harness workloads and engine versions on hand-made rows (worked by hand)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
import score_serving  # noqa: E402


def check(what, got, want):
    if got != want:
        sys.exit(f"{what}: {got}, by hand {want}")


INFERENCEX = "source_file=2026-04-06.csv; model=X; silicon_concurrency=8; measured=...; wip=False"
AICONFIGURATOR = "source_file=/data/aic-auto-gap-analysis/data/h100_sxm/vllm/0.12.0/x.csv"
DB_DUMP = "db-dump/2026-04-27; config_id=494; silicon_concurrency=30; workflow_run_id=269"

# InferenceX draws each length uniformly from [0.8, 1] x nominal: mean 0.9 x nominal (1,024 ->
# 921.6 -> 922; 8,192 -> 7,372.8 -> 7,373), standard deviation 0.2 / sqrt(12) = 0.057735 of
# nominal, so a CV of 0.057735 / 0.9 = 0.064150; 10 requests per client: 80 at 8 clients.
row = {"isl": "1024", "osl": "8192", "silicon_data_source": INFERENCEX}
check("InferenceX workload", score_serving.workload_args(row, 8),
      ["--isl", "922", "--osl", "7373", "--isl-dist", "uniform", "--osl-dist", "uniform",
       "--length-cv", "0.0642", "--requests", "80"])
check("InferenceX mean output", round(score_serving.mean_output_tokens(row), 6), 7372.8)
check("InferenceX's database dump", score_serving.harness_of({"silicon_data_source": DB_DUMP})
      is score_serving.HARNESSES["InferenceX"], True)
# AIConfigurator's own recipe runs aiperf at fixed lengths, 20 requests per client, all measured
# from the burst its profiling phase starts with: 160 at 8 clients.
row = {"isl": "1024", "osl": "128", "silicon_data_source": AICONFIGURATOR}
check("AIConfigurator workload", score_serving.workload_args(row, 8),
      ["--isl", "1024", "--osl", "128", "--requests", "160"])
check("AIConfigurator mean output", score_serving.mean_output_tokens(row), 128)

# KV format: the data's rule (an FP8 or FP4 checkpoint serves an fp8 cache) unless InferenceX
# launched the engine, whose vLLM keeps its default "auto": the model's data type, bf16. FP4 is
# gpt-oss's own MXFP4 (its config.json: quant_method mxfp4), NVFP4 (fp4) for a model whose own
# checkpoint is not (DeepSeek-R1's is fp8).
for backend, source, precision, model, want in [
        ("vllm", INFERENCEX, "fp8", "gpt-oss-120b", ("fp8", "bf16")),
        ("vllm", INFERENCEX, "fp4", "gpt-oss-120b", ("mxfp4", "bf16")),
        ("trtllm", AICONFIGURATOR, "fp4", "deepseek-r1", ("fp4", "fp8")),
        ("vllm", AICONFIGURATOR, "fp8", "qwen3-32b", ("fp8", "fp8")),
        ("trtllm", DB_DUMP, "fp8", "deepseek-r1", ("fp8", "fp8")),
        ("vllm", INFERENCEX, "", "llama-3.1-70b", ("bf16", "bf16"))]:
    row = {"backend": backend, "silicon_data_source": source, "precision": precision}
    check(f"KV of {backend} {precision!r} {model} {source[:12]}",
          score_serving.weight_format(row, model), want)

# The data's system names the cluster (AIConfigurator's names); a row without the column is the
# H100 file's; a system the catalog lacks is not expressible. NVL72 racks hold 72 GPUs a node.
for system, want in [("h100_sxm", ("dgx-h100", 8)), ("h200_sxm", ("dgx-h200", 8)),
                     ("b200_sxm", ("dgx-b200", 8)), ("gb200_sxm", ("gb200-nvl72", 72)),
                     ("b300_sxm", ("dgx-b300", 8)), ("gb300_sxm", ("gb300-nvl72", 72)),
                     ("h20_sxm", ("hgx-h20", 8)), ("mi355x", ("mi355x-8", 8)), ("tpu_v6e", None),
                     ("gh200_sxm", None), ("h100_pcie", None), ("h200_nvl", None),
                     ("l40s", ("l40s-pcie-8", 8))]:
    check(f"system {system}", score_serving.cluster_of({"system": system}), want)
check("no system column", score_serving.cluster_of({}), ("dgx-h100", 8))
# A repository names a catalog model by the longest leading part of its name that is one.
for hf, want in [("Qwen/Qwen3-32B", "qwen3-32b"), ("deepseek-ai/DeepSeek-R1-0528", "deepseek-r1"),
                 ("nvidia/Llama-3.3-70B-Instruct-FP4", "llama-3.3-70b"),
                 ("meta-llama/Llama-4-Maverick-17B-128E-Instruct-FP8", "llama-4-maverick"),
                 ("deepseek-ai/DeepSeek-V3.1-Terminus", "deepseek-v3"),
                 ("moonshotai/Kimi-K2-Instruct", "kimi-k2.5"), ("Qwen/Qwen3-8B", None),
                 # Another model built from a catalog one is not it.
                 ("deepseek-ai/DeepSeek-R1-Distill-Llama-70B", None),
                 ("deepseek-ai/DeepSeek-R1-0528-Qwen3-8B", None), ("openai-community/gpt2-xl", None),
                 ("Qwen/Qwen3-235B-A22B-Thinking-2507-FP8", "qwen3-235b-a22b")]:
    check(f"model {hf}", score_serving.catalog_model(hf), want)
check("MoE by config", (score_serving.is_moe("qwen3-235b-a22b"), score_serving.is_moe("qwen3-32b")),
      (True, False))

# Engine profiles (data/engines/): vllm-0.12 and vllm-0.18, trtllm-1.0, sglang-0.5. The newest at
# or below the row's version; the oldest for an older or unrecorded one.
for backend, version, want in [("vllm", "0.18.0", "vllm-0.18"), ("vllm", "0.20.1", "vllm-0.18"),
                               ("vllm", "0.12.0", "vllm-0.12"), ("vllm", "0.14.0", "vllm-0.12"),
                               ("vllm", "0.11.2", "vllm-0.12"), ("vllm", "", "vllm-0.12"),
                               ("trtllm", "1.3.0rc1", "trtllm-1.0"),
                               ("trtllm", "0.8.1.post3", "trtllm-1.0"),
                               ("sglang", "0.5.8.post1", "sglang-0.5")]:
    check(f"{backend} {version!r}", score_serving.engine_profile(backend, version), want)
# A version written with a prefix, a backend in capitals, a CSV without the column.
check("'v0.18.1'", score_serving.engine_profile("vllm", "v0.18.1"), "vllm-0.18")
check("'VLLM'", score_serving.engine_profile("VLLM", "0.18.0"), "vllm-0.18")
check("no version column", score_serving.engine_profile("vllm", None), "vllm-0.12")
# vLLM 0.14-0.17 have no profile of their own (0.18's source says asynchronous scheduling may
# have been their default too): they take 0.12's, the newest at or below them.
# A user's options replace the harness's (--simulate-args "--osl-dist fixed"), values and all.
check("user options",
      score_serving.with_options(
          ["simulate", "--osl", "922", "--osl-dist", "uniform", "--requests", "80"],
          ["--osl-dist", "fixed"]),
      ["simulate", "--osl", "922", "--requests", "80", "--osl-dist", "fixed"])
# An option without a value (--json) is replaced alone, the next option kept.
check("a flag", score_serving.with_options(["simulate", "--json", "--isl", "922"], ["--json"]),
      ["simulate", "--isl", "922", "--json"])
# score_mlperf takes the same rule where the software names the engine's own release; TensorRT
# rows name TensorRT's (10.11), not TensorRT-LLM's: they run TensorRT engines under the C++
# executor (trtllm-cpp), but DeepSeek-R1, which TensorRT-LLM serves only from its PyTorch
# backend, keeps that backend's newest profile (bare trtllm).
import score_mlperf  # noqa: E402

for software, model, want in [
        ("vLLM 0.9.0, PyTorch 2.7.0", "llama-2-70b", "vllm-0.12"),
        ("vLLM 0.6.5.dev964+mlperf50, Pytorch 2.7.0a0, ROCm", "llama-2-70b", "vllm-0.12"),
        ("TensorRT 10.11, CUDA 12.9", "llama-2-70b", "trtllm-cpp"),
        ("TensorRT 10.11, CUDA 12.9", "deepseek-r1", "trtllm")]:
    engine = score_mlperf.engine_label(software)
    check(f"MLPerf {software!r} {model}", score_mlperf.engine_version(engine, software, model),
          want)
# Tokens in each engine instance's step by Little's law (score_mlperf --details): Llama2-70B
# Server at 80 queries/s on 8 GPUs at TP2 is 4 instances of 20/s; a request holds its
# 222.33-token mean prompt and its 293.3-token mean output (mlperf-lengths.md, Server) for one
# TPOT each, so at a TPOT p50 of 100 ms: 20 x 515.63 x 0.1 = 1,031.26 tokens. With attention
# data parallel every GPU batches its own: 8 instances, 515.63. Offline has no TPOT.
row = {"scenario": "Server", "model": "llama2-70b-99", "tp": "2", "pp": "", "attn_dp": "False",
       "n_acc": "8", "target_qps": "80", "tpot_p50_ms": "100"}
check("tokens per step", round(score_mlperf.tokens_per_step(row), 2), 1031.26)
check("attention DP", round(score_mlperf.tokens_per_step({**row, "attn_dp": "True"}), 2), 515.63)
check("Offline", score_mlperf.tokens_per_step({**row, "scenario": "Offline"}), None)
# n_acc counts one node's GPUs: 18 GB200 trays of 4 at TP4 are 18 instances, so at 180/s each
# takes 10/s: 10 x 515.63 x 0.1 = 515.63 (read as one node's 4 GPUs it was 18x that).
check("nodes", round(score_mlperf.tokens_per_step(
    {**row, "n_acc": "4", "nodes": "18", "tp": "4", "target_qps": "180"}), 2), 515.63)
check("fewer GPUs than an instance", score_mlperf.tokens_per_step({**row, "n_acc": "1"}), None)
# Accelerators a later round spells differently are matched by their part; the NVL PCIe cards
# and mixed systems are not the catalog's clusters, and the GB200 NVL72 rack is not a card.
for text, want in [("NVIDIA B300-SXM-288GB", ("B300", "dgx-b300", 8)),
                   ("AMD Instinct MI355X 288GB HBM3E", ("MI355X", "mi355x-8", 8)),
                   ("NVIDIA GB200 NVL72", ("GB200", "gb200-nvl72", 72)),
                   ("NVIDIA B200-SXM-180GB", ("B200", "dgx-b200", 8)),
                   ("NVIDIA H200-NVL-141GB", None), ("NVIDIA H100 NVL", None),
                   ("AMD Instinct MI300X 192GB HBM3 (x4), AMD Instinct MI325X (x4)", None),
                   ("Google TPU v6e", None), ("NVIDIA GH200 144GB", None),
                   ("NVIDIA H100-PCIe-80GB", None)]:
    check(f"accelerator {text!r}", score_mlperf.accelerator_of(text), want)
check("unknown accelerator", score_mlperf.row_command(
    {"model": "llama2-70b-99", "accelerator": "Google TPU v6e"}, "shardwise", "t.csv"),
    (None, "accelerator Google TPU v6e is not in the catalog"))
# GPT-OSS-120B (v6.0): outputs through the published mean 1,278.2 and standard deviation 247
# at the normal quantiles (p10: 1,278.2 - 1.2816 x 247 = 961.6; p99: + 2.3263 x 247 = 1,852.8),
# between the published min 518 and max 3,154; inputs DeepSeek-R1's (assumed).
spec = score_mlperf.LENGTHS["gpt-oss-120b"]
check("GPT-OSS output knots", spec["output"], (518, 961.6, 1111.6, 1278.2, 1444.8, 1594.8,
                                                1852.8, 3154))
check("GPT-OSS inputs", spec["input"], score_mlperf.LENGTHS["deepseek-r1"]["input"])
check("GPT-OSS is MoE", "gpt-oss-120b" in score_mlperf.MOE, True)
# Bad input: a CSV without the columns, a value that is not a number: one line, or the row
# named as not expressible, never a traceback.
import subprocess  # noqa: E402
import tempfile  # noqa: E402

with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as f:
    f.write("a,b\n1,2\n")
for tool in ("score_serving.py", "score_mlperf.py"):
    p = subprocess.run([sys.executable, os.path.join(os.path.dirname(score_serving.__file__), tool),
                        "--csv", f.name], capture_output=True, text=True)
    check(f"{tool} on a CSV of other columns", (p.returncode, p.stderr.count("\n"),
                                                "has no column id" in p.stderr), (2, 1, True))
os.unlink(f.name)
check("a batch that is not a number", score_serving.checked_command(
    lambda row: (score_serving.to_int(row["batch_size"]), None), {"batch_size": "abc"})[0], None)
check("MLPerf value not a number", score_mlperf.not_a_number({**row, **{c: "" for c in
      score_mlperf.NUMERIC}, "n_acc": "eight"}), "n_acc")
check("MLPerf nan", score_mlperf.not_a_number({**{c: "" for c in score_mlperf.NUMERIC},
                                               "target_qps": "nan"}), "target_qps")
check("MLPerf numbers", score_mlperf.not_a_number({c: "1" for c in score_mlperf.NUMERIC}), None)
print("score_serving harnesses and engine versions: by hand")
