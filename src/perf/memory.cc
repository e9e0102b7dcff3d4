#include "shardwise/perf/memory.h"

#include <algorithm>
#include <cmath>

namespace shardwise {
namespace {

// NCCL allocates NCCL_BUFFSIZE (default 4 MiB) per channel and direction for each
// communicator; with the 16 channels it typically opens on NVLink that is 2 x 16 x 4 MiB
// (NCCL documentation, "Environment Variables": NCCL_BUFFSIZE, NCCL_MIN_NCHANNELS).
constexpr double kCommBufferBytesPerCommunicator = 2.0 * 16 * 4 * 1024 * 1024;
// Activations live per prefill token: hidden-sized tensors (input, residual, norm output,
// attention output, Q/K/V) and three FFN-width tensors (gate, up, their product).
constexpr double kHiddenTensorsPerToken = 6.0;
constexpr double kFfnTensorsPerToken = 3.0;
constexpr double kLogitBytes = 4.0;  // fp32 logits for sampling

double StageWeightParams(const ModelShard& s, const StageLayers& st) {
  const double moe_layer = s.attention_params + s.norm_params + s.experts_per_gpu * s.expert_params +
                           s.shared_params + s.router_params;
  const double dense_layer = s.attention_params + s.norm_params + s.dense_ffn_params;
  double params = static_cast<double>(st.moe) * moe_layer + static_cast<double>(st.dense) * dense_layer;
  if (st.first) params += s.vocab_params;
  if (st.last) params += s.vocab_params;
  return params;
}

// Tokens of KV one sequence keeps across a stage's layers (sliding windows capped).
double StageKvTokens(const StageLayers& st, int64_t context) {
  double tokens = 0;
  for (int64_t w : st.windows) tokens += static_cast<double>(w > 0 ? std::min(context, w) : context);
  return tokens;
}

}  // namespace

MemoryPerGpu EstimateMemory(const ModelShard& s, const ClusterSpec& c, const Workload& w,
                            const PerfOptions& o) {
  const Layout& l = s.layout;
  MemoryPerGpu m;
  m.hbm_bytes = c.gpu.hbm_bytes;
  m.usable_bytes = m.hbm_bytes * o.gpu_memory_utilization;
  m.reserve_bytes = m.hbm_bytes - m.usable_bytes;
  const double adp = static_cast<double>(l.AttentionDp());
  const double sequences_per_rank = std::ceil(static_cast<double>(w.batch) / adp);
  for (const StageLayers& st : s.stages) {
    const double weights = StageWeightParams(s, st) * BytesPerElement(o.weight_dtype);
    const double kv_seq = StageKvTokens(st, w.PeakContext()) * s.kv_bytes_per_token /
                          static_cast<double>(l.cp);
    // The fullest stage by weights plus this batch's KV.
    if (weights + kv_seq * sequences_per_rank > m.weight_bytes + m.kv_bytes) {
      m.weight_bytes = weights;
      m.kv_bytes_per_sequence = kv_seq;
      m.kv_bytes = kv_seq * sequences_per_rank;
    }
  }
  const double act = BytesPerElement(o.activation_dtype);
  const double chunk = static_cast<double>(o.max_batched_tokens) / static_cast<double>(l.cp);
  const double logits_per_sequence =
      static_cast<double>(s.vocab) / static_cast<double>(l.tp) * kLogitBytes;
  m.activation_bytes = chunk * (kHiddenTensorsPerToken * static_cast<double>(s.hidden) +
                                kFfnTensorsPerToken * s.ffn_width) * act +
                       sequences_per_rank * logits_per_sequence;
  int communicators = 0;
  for (int64_t degree : {l.tp, l.cp, l.ep, l.pp}) communicators += degree > 1 ? 1 : 0;
  m.comm_buffer_bytes = communicators * kCommBufferBytesPerCommunicator;
  // Each further sequence costs its KV and its logits row.
  const double fixed = m.weight_bytes + m.comm_buffer_bytes +
                       (m.activation_bytes - sequences_per_rank * logits_per_sequence);
  const double per_sequence = m.kv_bytes_per_sequence + logits_per_sequence;
  if (o.engine.kv_rule == KvMemoryRule::kFractionOfFreeAfterWeights) {
    // TensorRT-LLM: the KV pool is the fraction of what is free after weights, activations and
    // the runtime's own allocations.
    const double available = m.hbm_bytes - o.engine.runtime_reserve_bytes;
    m.usable_bytes = fixed <= available
                         ? fixed + (available - fixed) * o.gpu_memory_utilization
                         : available;
    m.reserve_bytes = m.hbm_bytes - m.usable_bytes;
  }
  const double free_bytes = m.usable_bytes - fixed;
  double kv_per_token = 0;  // one token across the fullest stage's layers, one GPU
  for (const StageLayers& st : s.stages) {
    kv_per_token = std::max(kv_per_token, static_cast<double>(st.windows.size()) *
                                              s.kv_bytes_per_token / static_cast<double>(l.cp));
  }
  m.kv_capacity_tokens = free_bytes <= 0 || kv_per_token <= 0
                             ? 0.0
                             : free_bytes / kv_per_token * static_cast<double>(l.AttentionDp());
  m.max_sequences = free_bytes <= 0 || per_sequence <= 0
                        ? 0
                        : static_cast<int64_t>(std::floor(free_bytes / per_sequence)) *
                              l.AttentionDp();
  return m;
}

}  // namespace shardwise
