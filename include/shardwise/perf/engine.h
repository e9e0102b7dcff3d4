// EngineProfile: how a serving engine (TensorRT-LLM, vLLM, SGLang, at a version) runs a step,
// beyond what the hardware dictates: the per-iteration CPU/scheduler time, whether decode runs
// in CUDA graphs and what a step costs outside them, which all-reduce kernel it picks by
// message size (custom one-shot / two-shot over NVLink, else NCCL), whether it fuses the
// all-reduce with the following RMSNorm, its attention kernels' efficiency, its chunked-prefill
// and batch defaults, and how it sizes the KV cache. Read from data/engines/<name>.json (or a
// user file of the same form); every number carries its source and whether it was measured,
// fitted or assumed. Plain value type.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "shardwise/common/provenance.h"
#include "shardwise/common/status.h"

namespace shardwise {

// How the engine sizes its KV cache.
enum class KvMemoryRule {
  kFractionOfTotal,            // vLLM gpu_memory_utilization, SGLang mem_fraction_static
  kFractionOfFreeAfterWeights  // TensorRT-LLM kv_cache_free_gpu_memory_fraction
};

// Kernels one decoder layer's blocks launch in an engine, all-reduces excluded (the collective
// model prices those). Counted from each engine's model code (perf/launch.h prices them).
struct KernelCounts {
  double attention = 0;     // norm, QKV GEMM, RoPE, KV-cache write, attention, output GEMM
  double dense_ffn = 0;     // norm, gate/up GEMM, activation, down GEMM
  double moe_ffn = 0;       // norm, router, top-k, permutation, expert GEMMs, activation, combine
  double qk_norm = 0;       // per-head Q and K norms, for models that have them (Qwen3)
  double per_fp8_gemm = 0;  // activation quantisation before each fp8 GEMM, when not fused
};

// Where measured closed loops fell against the predictions made with a profile: measured mean over
// predicted mean, its 10th and 90th percentile over the engine's rows of the serving validation
// (tools/calibrate_bands.py reads them off `tools/score_serving.py --details`). Closed-loop bands
// stretch to cover them (perf/uncertainty.h, MeasuredSpread).
struct MeasuredRatios {
  double p10 = 1;
  double p90 = 1;
};

struct EngineProfile {
  std::string name;     // "trtllm-1.0"
  std::string engine;   // "trtllm", "vllm", "sglang"
  std::string version;  // "1.0.0rc3"
  std::string description;
  double step_overhead_s = 0;       // CPU/scheduler time per iteration, not hidden
  double cuda_graph_max_batch = 0;  // decode batches up to this run in CUDA graphs
  // Whether iterations carrying prompt tokens replay CUDA graphs too, up to cuda_graph_max_batch
  // tokens in all (vLLM V1's piecewise graphs); else only decode-only iterations do.
  bool cuda_graph_prompts = false;
  double host_launch_s_per_kernel = 0;  // host time to issue one kernel outside CUDA graphs
  // Host time per decoder layer of an iteration that carries prompt tokens, beyond its launches:
  // the framework's per-module work outside CUDA graphs (eager PyTorch: context-phase metadata,
  // dispatch, Python) for each layer.
  double eager_host_s_per_layer = 0;
  KernelCounts kernels;                   // kernels per decoder-layer block
  double custom_allreduce_max_bytes = 0;  // custom all-reduce kernel up to this size, else NCCL
  double one_shot_max_bytes = 0;          // one-shot up to this size, two-shot above
  double custom_allreduce_latency_s = 0;  // one synchronisation round of the custom kernel
  bool fused_allreduce_norm = false;      // all-reduce + residual + RMSNorm in one kernel
  double attention_efficiency = 1;        // attention kernels' fraction of the GEMM rate
  double max_batched_tokens = 8192;       // tokens per iteration (chunked prefill)
  // Without chunked prefill a prompt must fit whole beside the running decodes: the budget is
  // configured to the longest prompt plus this (0: the budget stays max_batched_tokens), or to
  // the mean prompt plus this where prompt_headroom_over_mean (a rule fitted on measurements).
  double prompt_headroom_tokens = 0;
  bool prompt_headroom_over_mean = false;
  double max_num_seqs = 256;    // sequences running at once
  double kv_block_tokens = 16;  // KV allocation granularity
  KvMemoryRule kv_rule = KvMemoryRule::kFractionOfTotal;
  double memory_fraction = 0.9;      // of total, or of free after weights (kv_rule)
  double runtime_reserve_bytes = 0;  // CUDA context and allocator outside the fraction
  bool no_evict_admission = false;   // reserve prompt + output KV at admission
  bool mixed_prefill_decode = true;  // prompts' chunks ride with decodes (else prefill first)
  bool chunked_prefill = true;       // prompts split into chunks (else each runs whole)
  // The overlap scheduler: iteration k + 1 is composed as iteration k starts, so a request
  // reaching the scheduler while k runs waits for k + 2 (aggregated and decode pools).
  bool overlap_scheduler = false;
  // Whether the engine serves layouts with cp > 1 (ring attention over each prompt's slices).
  bool context_parallel = false;
  // The API server's path from a request's send to the scheduler (HTTP, chat template, IPC),
  // and its tokenization, one prompt at a time (sim/front_end.h).
  double request_path_s = 0;
  double tokenize_s_per_token = 0;
  // Whether `--emit` for this engine kind writes the runtime this profile models (false for a
  // TensorRT engine under the C++ executor: emit writes trtllm-serve's PyTorch backend).
  bool emit_matches = true;
  MeasuredRatios closed_loop_ttft;               // measured / predicted mean TTFT of closed loops
  MeasuredRatios closed_loop_tpot;               // and of TPOT
  std::string closed_loop_measured_on;           // the catalog GPU those closed loops ran on
  std::map<std::string, Provenance> provenance;  // per field
  std::map<std::string, std::string> sources;    // per field

  // Fields whose provenance is "assumed".
  std::vector<std::string> AssumedFields() const;
  // Whether the closed-loop spread (closed_loop_*_ratio) is assumed, borrowed from another
  // profile's measured loops, rather than measured with this one.
  bool ClosedLoopSpreadAssumed() const;
  // The API server's time for one request alone, from its send to the scheduler: its request
  // path and the tokenization of its `prompt_tokens`.
  double FrontEndS(int64_t prompt_tokens) const {
    return request_path_s + tokenize_s_per_token * static_cast<double>(prompt_tokens);
  }
};

StatusOr<EngineProfile> ParseEngineProfile(const nlohmann::json& json, const std::string& source);
// The tokens per iteration (per attention rank) a deployment of `engine` is configured with for
// prompts of `mean_prompt_tokens` on average and at most `longest_prompt_tokens`:
// max_batched_tokens, or, where the engine needs whole prompts to fit (as TensorRT-LLM's
// benchmarks configure it), the longest prompt plus prompt_headroom_tokens, up to
// max_batched_tokens but never below the mean prompt plus it (the mean alone where the profile
// says prompt_headroom_over_mean).
int64_t EngineTokenBudget(const EngineProfile& engine, int64_t mean_prompt_tokens,
                          int64_t longest_prompt_tokens);

// Names of the built-in profiles ("trtllm", "vllm", "sglang" and versioned names), sorted.
std::vector<std::string> BuiltinEngineNames();
// The numbers of a version, each part's leading digits ("0.18" -> {0, 18}; "1.0rc3" -> {1, 0}):
// versions compare number by number, so 0.18 is newer than 0.9.
std::vector<int64_t> VersionNumbers(std::string_view version);
// A built-in profile by name ("vllm" is the newest vLLM profile, "vllm-0.11" a version) or a
// profile file by path.
StatusOr<EngineProfile> LoadEngine(std::string_view name_or_path);
// The profile LoadEngine parses, as its file has it; `source` receives where it was read.
StatusOr<nlohmann::json> LoadEngineJson(std::string_view name_or_path, std::string& source);

}  // namespace shardwise
