// Inputs of the step-time model besides model, cluster and layout: the numeric formats, the
// memory policy, and the workload (batch and sequence lengths). Plain value types.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "shardwise/collective/ep_dispatch.h"
#include "shardwise/model/dtype.h"
#include "shardwise/model/weight_format.h"
#include "shardwise/perf/engine.h"

namespace shardwise {

struct ModelSpec;

// How decode proposes tokens: one per step (kNone), or k from a draft the target verifies.
enum class SpeculativeMethod { kNone, kMtp, kEagle, kDraftModel };

// Speculative decoding (speculative.h): the draft and the acceptance of each draft position.
struct SpeculativeOptions {
  SpeculativeMethod method = SpeculativeMethod::kNone;
  // Per draft position i = 1..k, the chance it is accepted when 1..i-1 were; k = its size.
  std::vector<double> acceptance;
  std::shared_ptr<const ModelSpec> draft_model;  // kDraftModel: the smaller model that drafts

  int64_t DraftTokens() const {
    return method == SpeculativeMethod::kNone ? 0 : static_cast<int64_t>(acceptance.size());
  }
};

// How MoE layers exchange tokens across an EP group (collective/ep_dispatch.h). kFlat: NCCL's
// all-to-all, as the engines run EP by default. The DeepEP-class kernels: node-dedup (normal),
// low-latency, or kAuto picking per phase as DeepSeek's deployments do (normal kernels in
// prefill, low-latency under decode's CUDA graphs). Dispatch may travel in fp8; combine stays
// in the activation format. Two-batch overlap (DeepSeek-V3 Technical Report 3.4; SGLang
// --enable-two-batch-overlap) runs each step as two micro-batches so that one's exchange runs
// under the other's compute, which loses the SMs the exchange kernels occupy (perf/overlap.h).
struct EpSetting {
  EpAlgorithm algorithm = EpAlgorithm::kFlat;
  Dtype dispatch_dtype = Dtype::kBf16;
  bool two_batch_overlap = false;
};

struct PerfOptions {
  Dtype weight_dtype = Dtype::kBf16;  // GEMM format, and every module's unless weight_formats
  // Per-module storage (a checkpoint's own quantization); unset: every module in weight_dtype.
  std::optional<WeightFormats> weight_formats;
  Dtype kv_dtype = Dtype::kBf16;
  Dtype activation_dtype = Dtype::kBf16;
  // Fraction of HBM the engine may use (vLLM's gpu_memory_utilization); the rest is a reserve
  // for the CUDA context, allocator fragmentation and kernels' scratch.
  double gpu_memory_utilization = 0.9;
  // Load on the busiest expert rank over the mean; 0 derives it from the token count.
  double expert_imbalance = 0;
  // Extra expert copies per EP group (DeepSeek-V3's redundant experts), used when ep > 1: each
  // EP rank holds (routed + redundant) / ep expert slots.
  int64_t redundant_experts = 0;
  // Routing skew: expert i of the routed experts, hottest first, draws a share proportional to
  // (i + 1)^-s (Zipf exponent s; 0 is uniform). Unset: uniform routing, as when s = 0.
  std::optional<double> expert_skew;
  // Measured routed-expert loads, one vector per MoE layer (or one for all); non-empty
  // replaces expert_skew (perf/expert_loads.h).
  std::vector<std::vector<double>> expert_loads;
  // Place the shared experts in routed experts' slots of the EP group, every token selecting
  // them (perf/moe.h SharedExpertsAsRouted), instead of a copy on every GPU.
  bool shared_experts_routed = false;
  // GShard capacity: each expert computes at most this times its mean share of the pairs and
  // drops the rest (unset: no limit).
  std::optional<double> capacity_factor;
  SpeculativeOptions speculative;
  // Fraction of each prompt's tokens already in the prefix cache (DeepSeek reports 56% of input
  // tokens hitting its on-disk cache): prefill computes only the rest, attending to all of them.
  double prefix_hit_rate = 0;
  // Tokens per prefill chunk (vLLM/TensorRT-LLM max_num_batched_tokens).
  int64_t max_batched_tokens = 8192;
  EpSetting ep;
  // The serving engine; the default-constructed profile adds no overheads and uses NCCL for
  // every collective (the bare hardware model). The CLI loads --engine (default trtllm).
  EngineProfile engine;
};

struct Workload {
  int64_t batch = 1;             // concurrent sequences per instance
  int64_t prompt_tokens = 1024;  // prefill length (ISL)
  int64_t output_tokens = 256;   // generated tokens (OSL)
  // KV length seen by decode steps; 0 means the average over generation, prompt + output / 2.
  int64_t decode_context_tokens = 0;

  int64_t DecodeContext() const {
    return decode_context_tokens > 0 ? decode_context_tokens : prompt_tokens + output_tokens / 2;
  }
  // KV a sequence holds at its longest.
  int64_t PeakContext() const {
    return decode_context_tokens > 0 ? decode_context_tokens : prompt_tokens + output_tokens;
  }
};

}  // namespace shardwise
