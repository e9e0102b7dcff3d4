#include "shardwise/perf/memory.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

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

// Weight bytes of one stage on one GPU, each module in its format.
double StageWeightBytes(const ModelShard& s, const StageLayers& st, const WeightFormats& f) {
  const double moe_ffn = s.experts_per_gpu * s.expert_params * f.routed_experts.bytes_per_param +
                         s.shared_params * f.shared_experts.bytes_per_param +
                         s.router_params * f.router.bytes_per_param;
  double bytes = static_cast<double>(st.moe) * moe_ffn +
                 static_cast<double>(st.dense) * s.dense_ffn_params * f.dense_ffn.bytes_per_param +
                 static_cast<double>(st.mixers.size()) * s.norm_params * f.norm.bytes_per_param;
  for (MixerKind kind : st.mixers) {
    const double params = kind == MixerKind::kAttention ? s.attention_params
                          : kind == MixerKind::kNone    ? 0.0
                                                        : s.recurrent_params;
    bytes += params * f.mixer.bytes_per_param;
  }
  if (st.first) bytes += s.vocab_params * f.embedding.bytes_per_param;
  if (st.last) bytes += s.vocab_params * f.lm_head.bytes_per_param;
  return bytes;
}

// Tokens of KV one sequence keeps across a stage's attention layers (sliding windows capped).
double StageKvTokens(const StageLayers& st, int64_t context) {
  double tokens = 0;
  for (size_t i = 0; i < st.mixers.size(); ++i) {
    if (st.mixers[i] != MixerKind::kAttention) continue;
    const int64_t w = st.windows[i];
    tokens += static_cast<double>(w > 0 ? std::min(context, w) : context);
  }
  return tokens;
}

double StageAttentionLayers(const StageLayers& st) {
  return static_cast<double>(std::count(st.mixers.begin(), st.mixers.end(), MixerKind::kAttention));
}

// Attention layers whose KV grows with the context: the full ones, or every attention layer
// when all of them slide (then none is bounded apart from the others).
double StageGrowingKvLayers(const StageLayers& st) {
  double full = 0;
  for (size_t i = 0; i < st.mixers.size(); ++i) {
    full += st.mixers[i] == MixerKind::kAttention && st.windows[i] == 0 ? 1.0 : 0.0;
  }
  return full > 0 ? full : StageAttentionLayers(st);
}

// Tokens of KV one sequence keeps at `context` in the stage's sliding-window layers beside
// full ones: bounded by the windows, so a fixed amount per sequence like a recurrent state.
double StageWindowedKvTokens(const StageLayers& st, int64_t context) {
  if (StageGrowingKvLayers(st) == StageAttentionLayers(st)) return 0.0;
  double tokens = 0;
  for (size_t i = 0; i < st.mixers.size(); ++i) {
    const int64_t w = st.windows[i];
    if (st.mixers[i] == MixerKind::kAttention && w > 0) {
      tokens += static_cast<double>(std::min(context, w));
    }
  }
  return tokens;
}

// Recurrent state one sequence keeps across a stage's linear-attention/SSM layers: fixed,
// whatever the context.
double StageStateBytes(const ModelShard& s, const StageLayers& st) {
  const double attention_or_none =
      StageAttentionLayers(st) +
      static_cast<double>(std::count(st.mixers.begin(), st.mixers.end(), MixerKind::kNone));
  return (static_cast<double>(st.mixers.size()) - attention_or_none) * s.state_bytes_per_sequence;
}

}  // namespace

MemoryPerGpu EstimateMemory(const ModelShard& s, const ClusterSpec& c, const Workload& w,
                            const PerfOptions& o, const DraftMemory& draft) {
  const Layout& l = s.layout;
  MemoryPerGpu m;
  m.hbm_bytes = c.gpu.hbm_bytes;
  m.usable_bytes = m.hbm_bytes * o.gpu_memory_utilization;
  m.reserve_bytes = m.hbm_bytes - m.usable_bytes;
  const double adp = static_cast<double>(l.AttentionDp());
  const double sequences_per_rank = std::ceil(static_cast<double>(w.batch) / adp);
  // Each stage's weights, KV per sequence and KV per token: the stage that binds at one batch
  // (the first, with the embedding and dense layers) need not be the one that binds at the
  // most sequences (the one with more attention layers).
  struct StageBytes {
    double weights, kv_per_sequence, kv_per_token;
  };
  std::vector<StageBytes> stages;
  for (const StageLayers& st : s.stages) {
    // The draft lives beside the LM head, on the last stage.
    const double draft_share = st.last ? 1.0 : 0.0;
    const double weights =
        StageWeightBytes(s, st, o.weight_formats.value_or(WeightFormats::Uniform(o.weight_dtype))) +
        draft_share * draft.weight_bytes;
    const double kv_token_bytes = s.kv_bytes_per_token / static_cast<double>(l.cp);
    const double recurrent = StageStateBytes(s, st);
    const double state_seq =
        recurrent + StageWindowedKvTokens(st, w.PeakContext()) * kv_token_bytes;
    // StageKvTokens counts the windowed layers' KV too.
    const double kv_seq =
        StageKvTokens(st, w.PeakContext()) * kv_token_bytes + recurrent +
        draft_share * draft.kv_bytes_per_token * static_cast<double>(w.PeakContext());
    stages.push_back({weights, kv_seq,
                      StageGrowingKvLayers(st) * s.kv_bytes_per_token / static_cast<double>(l.cp) +
                          (st.last ? draft.kv_bytes_per_token : 0.0)});
    // The fullest stage by weights plus this batch's KV.
    if (weights + kv_seq * sequences_per_rank > m.weight_bytes + m.kv_bytes) {
      m.weight_bytes = weights;
      m.kv_bytes_per_sequence = kv_seq;
      m.state_bytes_per_sequence = state_seq;
      m.kv_bytes = kv_seq * sequences_per_rank;
    }
  }
  const double act = BytesPerElement(o.activation_dtype);
  const double chunk = static_cast<double>(o.max_batched_tokens) / static_cast<double>(l.cp);
  const double logits_per_sequence =
      static_cast<double>(s.vocab) / static_cast<double>(l.tp) * kLogitBytes;
  m.activation_bytes = chunk *
                           (kHiddenTensorsPerToken * static_cast<double>(s.hidden) +
                            kFfnTensorsPerToken * s.ffn_width) *
                           act +
                       sequences_per_rank * logits_per_sequence;
  int communicators = 0;
  for (int64_t degree : {l.tp, l.cp, l.ep, l.pp}) communicators += degree > 1 ? 1 : 0;
  m.comm_buffer_bytes = communicators * kCommBufferBytesPerCommunicator;
  // Each further sequence costs its KV and its logits row; the rest is fixed.
  const double batch_free =
      m.comm_buffer_bytes + (m.activation_bytes - sequences_per_rank * logits_per_sequence);
  const double available = m.hbm_bytes - o.engine.runtime_reserve_bytes;
  const double utilization = o.gpu_memory_utilization;
  const double fraction_of_total = m.usable_bytes;
  // What a GPU whose fixed bytes are `fixed` may fill. TensorRT-LLM: the KV pool is the fraction
  // of what is free after weights, activations and the runtime's own allocations.
  const auto usable = [&](double fixed) {
    if (o.engine.kv_rule != KvMemoryRule::kFractionOfFreeAfterWeights) return fraction_of_total;
    return fixed <= available ? fixed + (available - fixed) * utilization : available;
  };
  m.usable_bytes = usable(m.weight_bytes + batch_free);
  m.reserve_bytes = m.hbm_bytes - m.usable_bytes;
  // The sequences and KV tokens every stage holds: the least over the stages.
  double sequences = std::numeric_limits<double>::infinity();
  double tokens = std::numeric_limits<double>::infinity();
  double kv_per_token = 0;  // one token across the fullest stage's layers, one GPU
  for (const StageBytes& st : stages) {
    const double fixed = st.weights + batch_free;
    const double free_bytes = std::max(0.0, usable(fixed) - fixed);
    sequences = std::min(sequences,
                         st.kv_per_sequence + logits_per_sequence > 0
                             ? std::floor(free_bytes / (st.kv_per_sequence + logits_per_sequence))
                             : 0.0);
    if (st.kv_per_token > 0) tokens = std::min(tokens, free_bytes / st.kv_per_token);
    kv_per_token = std::max(kv_per_token, st.kv_per_token);
  }
  m.kv_bytes_per_token = kv_per_token;
  m.kv_capacity_tokens = std::isfinite(tokens) ? tokens * adp : 0.0;
  m.state_tokens_per_sequence = kv_per_token > 0 ? m.state_bytes_per_sequence / kv_per_token : 0.0;
  m.max_sequences =
      std::isfinite(sequences) ? static_cast<int64_t>(sequences) * l.AttentionDp() : 0;
  return m;
}

}  // namespace shardwise
