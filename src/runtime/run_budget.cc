#include "shardwise/runtime/run_budget.h"

#include <algorithm>

#include "shardwise/layout/shard_geometry.h"
#include "shardwise/model/accounting.h"

namespace shardwise {
namespace {

constexpr double kFloatBytes = 4.0;  // activations, KV caches and the reference are fp32

// Bytes of the buffers one rank holds during prefill, the largest step: the hidden state and
// its normed copy, residual and attention outputs (5 x hidden per row), this rank's Q/K/V
// projections, the FFN's gate/up/down outputs (or the MoE dispatch buffers, three copies of
// hidden per routed token), and the final logits of all sequences gathered on every rank.
double ActivationBytesPerRank(const RunConfig& c, int64_t tp, int64_t rows, int64_t sequences) {
  const ModelSpec& m = c.model;
  const double h = static_cast<double>(m.hidden_size);
  const double qkv = static_cast<double>((m.num_heads + 2 * m.num_kv_heads) * m.head_dim) /
                     static_cast<double>(tp);
  const double ffn =
      std::max(static_cast<double>(2 * m.intermediate_size) / static_cast<double>(tp) + h,
               3.0 * h * static_cast<double>(std::max<int64_t>(1, m.moe.experts_per_token)));
  const double per_row = 5 * h + qkv + ffn;
  const double logits =
      static_cast<double>(c.batch + sequences) * static_cast<double>(m.vocab_size);
  return kFloatBytes * (static_cast<double>(rows) * per_row + logits);
}

double KvBytes(const ModelSpec& m, int64_t kv_heads_stored, int64_t sequences, int64_t tokens) {
  return kFloatBytes * 2.0 * static_cast<double>(m.num_layers()) *
         static_cast<double>(kv_heads_stored * m.head_dim) * static_cast<double>(sequences) *
         static_cast<double>(tokens);
}

}  // namespace

double RunMemory::PeakBytes() const {
  return std::max(weight_bytes + kv_bytes + activation_bytes, reference_bytes);
}

RunMemory EstimateRunMemory(const RunConfig& c, int64_t ranks_here, bool with_reference) {
  const ModelSpec& m = c.model;
  const Layout& l = c.layout;
  const ParamBreakdown p = CountParams(m);
  const int64_t tokens = c.prompt_tokens + c.generate_tokens;
  const double table = static_cast<double>(m.vocab_size * m.hidden_size);
  // Per replica, TP, PP and EP split the layers' weights without copies; each TP rank of the
  // first stage holds the whole embedding, each of the last stage its LM-head rows padded to
  // the widest share (shard_geometry.h). Attention and dense weights repeat on every DP rank,
  // routed experts once per replica.
  const double per_dp =
      static_cast<double>(p.attention + p.dense_ffn + p.shared_experts + p.router + p.norms);
  const double lm_head =
      static_cast<double>(VocabRange(m.vocab_size, l.tp, 0).padded_rows * l.tp * m.hidden_size);
  const double run_weights =
      static_cast<double>(l.dp) * (per_dp + table * static_cast<double>(l.tp) + lm_head) +
      static_cast<double>(l.Replicas()) * static_cast<double>(p.routed_experts);
  const double run_kv =
      KvBytes(m, KvHeadsOverRanks(m.num_heads, m.num_kv_heads, l.tp), c.batch, tokens);
  const int64_t per_rank = c.batch / l.dp;
  const int64_t micro = std::max<int64_t>(1, std::min<int64_t>(l.pp, per_rank));
  const int64_t rows = (per_rank + micro - 1) / micro * c.prompt_tokens;
  const double run_activations =
      ActivationBytesPerRank(c, l.tp, rows, per_rank) * static_cast<double>(l.gpus());

  // Ranks in this process hold their share of the run's totals.
  const double share = static_cast<double>(ranks_here) / static_cast<double>(l.gpus());
  RunMemory out;
  // The weights in the run's storage (norms and routers, always fp32, are a negligible share).
  out.weight_bytes = WeightStorageBytes(c.kernels.weights) * run_weights * share;
  out.kv_bytes = run_kv * share;
  out.activation_bytes = run_activations * share;
  if (with_reference) {
    const double tied_copy = m.tie_word_embeddings ? table : 0.0;  // read again as the LM head
    out.reference_bytes = kFloatBytes * (static_cast<double>(p.total) + tied_copy) +
                          KvBytes(m, m.num_kv_heads, c.batch, tokens) +
                          ActivationBytesPerRank(c, 1, c.batch * c.prompt_tokens, c.batch);
  }
  return out;
}

}  // namespace shardwise
