#include "shardwise/model/accounting.h"

#include <algorithm>

namespace shardwise {
namespace {

// Q/K and V head widths used by the attention score and value products.
struct HeadDims {
  int64_t qk;
  int64_t v;
};

HeadDims AttentionHeadDims(const ModelSpec& s) {
  if (s.mla) return {s.mla->qk_nope_head_dim + s.mla->qk_rope_head_dim, s.mla->v_head_dim};
  return {s.head_dim, s.head_dim};
}

int64_t MlaAttentionParams(const ModelSpec& s) {
  const MlaSpec& m = *s.mla;
  const int64_t h = s.hidden_size;
  const int64_t qk_dim = m.qk_nope_head_dim + m.qk_rope_head_dim;
  const int64_t q = m.q_lora_rank > 0
                        ? h * m.q_lora_rank + m.q_lora_rank + m.q_lora_rank * s.num_heads * qk_dim
                        : h * s.num_heads * qk_dim;
  const int64_t kv_down = h * (m.kv_lora_rank + m.qk_rope_head_dim) + m.kv_lora_rank;  // + norm
  const int64_t kv_up = m.kv_lora_rank * s.num_heads * (m.qk_nope_head_dim + m.v_head_dim);
  const int64_t out = s.num_heads * m.v_head_dim * h;
  return q + kv_down + kv_up + out;
}

int64_t SharedExpertParamsPerLayer(const ModelSpec& s) {
  const MoeSpec& m = s.moe;
  return m.num_shared_experts * 3 * s.hidden_size * m.shared_intermediate_size +
         (m.shared_expert_gate ? s.hidden_size : 0);
}

int64_t RouterParamsPerLayer(const ModelSpec& s) {
  const MoeSpec& m = s.moe;
  return s.hidden_size * m.num_experts + (m.router_bias ? m.num_experts : 0) +
         (m.router_score_bias ? m.num_experts : 0);
}

// Sum over t = 1..n of min(t, window) (window 0 = unbounded): keys seen by each causal query.
double CausalKeyCount(int64_t n, int64_t window) {
  const double nn = static_cast<double>(n);
  if (window <= 0 || n <= window) return nn * (nn + 1) / 2;
  const double w = static_cast<double>(window);
  return w * (w + 1) / 2 + (nn - w) * w;
}

// Keys the attention core of `layer` reads for a query: the window, or DSA's top-k, caps it.
int64_t CoreKeyLimit(const ModelSpec& s, const LayerSpec& layer) {
  if (layer.sliding_window > 0) return layer.sliding_window;
  return s.indexer ? s.indexer->topk : 0;
}

// DSA indexer FLOPs per (query, key) pair: each of index_heads heads takes a dot product of
// index_head_dim (2 d FLOPs), then its ReLU score is weighted and summed over heads (2 FLOPs).
double IndexerFlopsPerKey(const ModelSpec& s) {
  if (!s.indexer) return 0;
  return 2.0 * static_cast<double>(s.indexer->index_heads * (s.indexer->index_head_dim + 1));
}

int64_t NormsPerLayer(const LayerSpec& layer) {
  return (layer.mixer != MixerKind::kNone ? 1 : 0) + (layer.ffn != FfnKind::kNone ? 1 : 0);
}

}  // namespace

int64_t IndexerParamsPerLayer(const ModelSpec& s) {
  if (!s.indexer) return 0;
  // DeepSeek-V3.2 Indexer (inference/model.py): wq_b from the Q latent (or the hidden state
  // without one) to index_heads x index_head_dim; wk hidden -> index_head_dim; a LayerNorm on
  // the key (weight and bias); weights_proj hidden -> index_heads.
  const SparseIndexerSpec& x = *s.indexer;
  const int64_t q_in = s.mla && s.mla->q_lora_rank > 0 ? s.mla->q_lora_rank : s.hidden_size;
  return q_in * x.index_heads * x.index_head_dim + s.hidden_size * x.index_head_dim +
         2 * x.index_head_dim + s.hidden_size * x.index_heads;
}

int64_t AttentionParamsPerLayer(const ModelSpec& s) {
  if (s.mla) return MlaAttentionParams(s) + IndexerParamsPerLayer(s);
  const int64_t h = s.hidden_size;
  const int64_t q_width = s.num_heads * s.head_dim;
  const int64_t kv_width = s.num_kv_heads * s.head_dim;
  int64_t params = h * q_width + 2 * h * kv_width + q_width * h;
  if (s.attention_output_gate) params += h * q_width;  // q_proj also yields the gate
  if (s.qkv_bias) params += q_width + 2 * kv_width;
  if (s.o_bias) params += h;
  if (s.qk_norm == QkNorm::kPerHead) params += 2 * s.head_dim;
  if (s.qk_norm == QkNorm::kPerLayer) params += q_width + kv_width;
  if (s.attention_sinks) params += s.num_heads;
  return params + IndexerParamsPerLayer(s);
}

int64_t DenseFfnParamsPerLayer(const ModelSpec& s) {
  const int64_t h = s.hidden_size;
  const int64_t f = s.intermediate_size;
  const int64_t up_matrices = s.gated_ffn ? 2 : 1;
  return (up_matrices + 1) * h * f + (s.ffn_bias ? up_matrices * f + h : 0);
}

int64_t ParamsPerExpert(const ModelSpec& s) {
  const int64_t i = s.moe.expert_intermediate_size;
  // gate and up (hidden -> i each) and down (i -> hidden), plus their biases where present
  return 3 * s.hidden_size * i + (s.moe.expert_bias ? 2 * i + s.hidden_size : 0);
}

ParamBreakdown CountParams(const ModelSpec& s) {
  ParamBreakdown p;
  const int64_t h = s.hidden_size;
  const int64_t position_table = s.position_embeddings * h;
  p.embedding = s.vocab_size * h + position_table;
  p.lm_head = s.tie_word_embeddings ? 0 : s.vocab_size * h;
  int64_t norms_per_token = 1;  // the final norm
  int64_t dense_layers = 0;
  for (const LayerSpec& layer : s.layers) {
    norms_per_token += NormsPerLayer(layer);
    dense_layers += layer.ffn == FfnKind::kDense ? 1 : 0;
  }
  p.norms = (s.norm_bias ? 2 : 1) * norms_per_token * h;
  p.attention = AttentionParamsPerLayer(s) * s.num_attention_layers();
  p.recurrent =
      s.num_recurrent_layers() > 0 ? RecurrentParamsPerLayer(s) * s.num_recurrent_layers() : 0;
  const int64_t moe_layers = s.num_moe_layers();
  p.dense_ffn = dense_layers * DenseFfnParamsPerLayer(s);
  if (s.is_moe()) {
    p.routed_experts = moe_layers * s.moe.num_experts * ParamsPerExpert(s);
    p.shared_experts = moe_layers * SharedExpertParamsPerLayer(s);
    p.router = moe_layers * RouterParamsPerLayer(s);
  }
  p.total = p.embedding + p.lm_head + p.norms + p.attention + p.recurrent + p.dense_ffn +
            p.routed_experts + p.shared_experts + p.router;
  const int64_t active_experts =
      s.is_moe() ? moe_layers * s.moe.experts_per_token * ParamsPerExpert(s) : 0;
  p.active = p.total - p.routed_experts + active_experts;
  // A tied table is the LM head's matrix; the position table is a lookup either way.
  p.active_matmul = s.tie_word_embeddings ? p.active - position_table : p.active - p.embedding;
  return p;
}

double WeightBytes(const ModelSpec& s, Dtype dtype) {
  return static_cast<double>(CountParams(s).total) * BytesPerElement(dtype);
}

double WeightBytes(const ModelSpec& s, const WeightFormats& f) {
  const ParamBreakdown p = CountParams(s);
  auto bytes = [](int64_t params, const WeightFormat& format) {
    return static_cast<double>(params) * format.bytes_per_param;
  };
  return bytes(p.embedding, f.embedding) + bytes(p.lm_head, f.lm_head) +
         bytes(p.attention + p.recurrent, f.mixer) + bytes(p.dense_ffn, f.dense_ffn) +
         bytes(p.routed_experts, f.routed_experts) + bytes(p.shared_experts, f.shared_experts) +
         bytes(p.router, f.router) + bytes(p.norms, f.norm);
}

double NativeWeightBytes(const ModelSpec& s) { return WeightBytes(s, s.native_formats); }

double IndexerKeyBytesPerToken(const ModelSpec& s, Dtype kv_dtype) {
  return s.indexer ? static_cast<double>(s.indexer->index_head_dim) * BytesPerElement(kv_dtype)
                   : 0.0;
}

double KvBytesPerTokenPerLayer(const ModelSpec& s, Dtype kv_dtype) {
  const double elements = s.mla ? static_cast<double>(s.mla->kv_lora_rank + s.mla->qk_rope_head_dim)
                                : 2.0 * static_cast<double>(s.num_kv_heads * s.head_dim);
  return elements * BytesPerElement(kv_dtype) + IndexerKeyBytesPerToken(s, kv_dtype);
}

double KvBytesPerToken(const ModelSpec& s, Dtype kv_dtype) {
  return KvBytesPerTokenPerLayer(s, kv_dtype) * static_cast<double>(s.num_attention_layers());
}

double KvBytesForSequence(const ModelSpec& s, int64_t context_tokens, Dtype kv_dtype) {
  double tokens_kept = 0;
  for (const LayerSpec& layer : s.layers) {
    if (!layer.attention()) continue;
    const int64_t kept =
        layer.sliding_window > 0 ? std::min(context_tokens, layer.sliding_window) : context_tokens;
    tokens_kept += static_cast<double>(kept);
  }
  return tokens_kept * KvBytesPerTokenPerLayer(s, kv_dtype);
}

double SequenceCacheBytes(const ModelSpec& s, int64_t context_tokens, Dtype kv_dtype) {
  return KvBytesForSequence(s, context_tokens, kv_dtype) + StateBytesPerSequence(s);
}

AttentionFlopsCurve::AttentionFlopsCurve(const ModelSpec& s) {
  const HeadDims d = AttentionHeadDims(s);
  const double per_key = 2.0 * static_cast<double>(s.num_heads * (d.qk + d.v));
  for (const LayerSpec& layer : s.layers) {
    if (layer.recurrent()) constant_ += RecurrentDecodeFlopsPerToken(s);
    if (!layer.attention()) continue;
    per_key_ += IndexerFlopsPerKey(s);
    const int64_t limit = CoreKeyLimit(s, layer);
    if (limit <= 0) {
      per_key_ += per_key;
      continue;
    }
    const double cap = static_cast<double>(limit);
    auto it = std::find_if(capped_.begin(), capped_.end(),
                           [&](const std::pair<double, double>& c) { return c.first == cap; });
    if (it == capped_.end()) {
      capped_.emplace_back(cap, per_key);
    } else {
      it->second += per_key;
    }
  }
}

double AttentionFlopsCurve::operator()(int64_t context_tokens) const {
  const double context = static_cast<double>(context_tokens);
  double flops = constant_ + per_key_ * context;
  for (const auto& [limit, per_key] : capped_) flops += per_key * std::min(context, limit);
  return flops;
}

double AttentionFlopsPerQuery(const ModelSpec& s, int64_t context_tokens) {
  return AttentionFlopsCurve(s)(context_tokens);
}

Flops DecodeFlopsPerToken(const ModelSpec& s, int64_t context_tokens) {
  return {2.0 * static_cast<double>(CountParams(s).active_matmul),
          AttentionFlopsPerQuery(s, context_tokens)};
}

Flops PrefillFlops(const ModelSpec& s, int64_t prompt_tokens) {
  const ParamBreakdown p = CountParams(s);
  const double lm_head = static_cast<double>(s.vocab_size * s.hidden_size);
  const double body = static_cast<double>(p.active_matmul) - lm_head;
  const HeadDims d = AttentionHeadDims(s);
  const double per_key = 2.0 * static_cast<double>(s.num_heads * (d.qk + d.v));
  const double n = static_cast<double>(prompt_tokens);
  double mixer = 0;
  for (const LayerSpec& layer : s.layers) {
    if (layer.recurrent()) mixer += RecurrentPrefillFlopsPerToken(s) * n;
    if (!layer.attention()) continue;
    mixer += per_key * CausalKeyCount(prompt_tokens, CoreKeyLimit(s, layer)) +
             IndexerFlopsPerKey(s) * CausalKeyCount(prompt_tokens, 0);
  }
  // Every prompt token goes through the body; only the last one needs logits.
  return {2.0 * (body * n + lm_head), mixer};
}

}  // namespace shardwise
