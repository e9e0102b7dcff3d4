#include "shardwise/perf/shard.h"

#include <algorithm>

#include "shardwise/model/accounting.h"

namespace shardwise {
namespace {

// Attention parameters that every TP rank holds whole: MLA's down-projections (to the Q and
// KV latents) and their norms; everything else splits by heads.
double ReplicatedAttentionParams(const ModelSpec& m) {
  if (!m.mla) return 0;
  const MlaSpec& a = *m.mla;
  return static_cast<double>(m.hidden_size * a.q_lora_rank + a.q_lora_rank +
                             m.hidden_size * (a.kv_lora_rank + a.qk_rope_head_dim) +
                             a.kv_lora_rank);
}

}  // namespace

ModelShard ShardModel(const ModelSpec& m, const Layout& l, const PerfOptions& o) {
  ModelShard s;
  s.layout = l;
  s.hidden = m.hidden_size;
  s.vocab = m.vocab_size;
  const double tp = static_cast<double>(l.tp);
  const double replicated = ReplicatedAttentionParams(m);
  s.attention_params =
      replicated + (static_cast<double>(AttentionParamsPerLayer(m)) - replicated) / tp;
  s.dense_ffn_params = static_cast<double>(DenseFfnParamsPerLayer(m)) / tp;
  s.norm_params = 2.0 * static_cast<double>(m.hidden_size);
  s.heads = static_cast<double>(m.num_heads) / tp;
  s.vocab_params = static_cast<double>(m.vocab_size * m.hidden_size) / tp;
  s.ffn_width = m.num_moe_layers() < m.num_layers()
                    ? static_cast<double>(m.intermediate_size) / tp
                    : 0.0;
  if (m.is_moe()) {
    const double etp = static_cast<double>(l.ExpertTp());
    s.expert_params = static_cast<double>(ParamsPerExpert(m)) / etp;
    s.experts_per_gpu = static_cast<double>(m.moe.num_experts) / static_cast<double>(l.ep);
    s.shared_params = static_cast<double>(m.moe.num_shared_experts * 3 * m.hidden_size *
                                          m.moe.shared_intermediate_size) /
                      tp;
    s.router_params = static_cast<double>(m.hidden_size * m.moe.num_experts);
    s.ffn_width = std::max(s.ffn_width, static_cast<double>(m.moe.expert_intermediate_size *
                                                            m.moe.experts_per_token) /
                                            etp);
  }
  // KV: each TP rank keeps the KV heads its query heads use (replicated when TP exceeds
  // them); MLA's latent is shared by all heads, so every TP rank keeps all of it.
  const double kv_layer = KvBytesPerTokenPerLayer(m, o.kv_dtype);
  const double kv_heads_here =
      m.mla ? 1.0 : static_cast<double>(KvHeadsPerRank(m.num_heads, m.num_kv_heads, l.tp));
  s.kv_bytes_per_token =
      m.mla ? kv_layer : kv_layer * kv_heads_here / static_cast<double>(m.num_kv_heads);
  const double qk = m.mla ? static_cast<double>(m.mla->qk_nope_head_dim + m.mla->qk_rope_head_dim)
                          : static_cast<double>(m.head_dim);
  const double v = m.mla ? static_cast<double>(m.mla->v_head_dim) : static_cast<double>(m.head_dim);
  s.attention_flops_per_key = 2.0 * s.heads * (qk + v);

  // GEMM shapes per GPU (fused where engines fuse: QKV, gate+up).
  const double h = static_cast<double>(m.hidden_size);
  if (m.mla) {
    const MlaSpec& a = *m.mla;
    const double qk = static_cast<double>(a.qk_nope_head_dim + a.qk_rope_head_dim);
    if (a.q_lora_rank > 0) {
      s.attention_gemms.push_back({static_cast<double>(a.q_lora_rank), h});
      s.attention_gemms.push_back({s.heads * qk, static_cast<double>(a.q_lora_rank)});
    } else {
      s.attention_gemms.push_back({s.heads * qk, h});
    }
    s.attention_gemms.push_back({static_cast<double>(a.kv_lora_rank + a.qk_rope_head_dim), h});
    s.attention_gemms.push_back({s.heads * static_cast<double>(a.qk_nope_head_dim + a.v_head_dim),
                                 static_cast<double>(a.kv_lora_rank)});
    s.attention_gemms.push_back({h, s.heads * static_cast<double>(a.v_head_dim)});
  } else {
    const double hd = static_cast<double>(m.head_dim);
    s.attention_gemms.push_back({(s.heads + 2 * kv_heads_here) * hd, h});
    s.attention_gemms.push_back({h, s.heads * hd});
  }
  const double inter = static_cast<double>(m.intermediate_size) / tp;
  s.dense_ffn_gemms = {{(m.gated_ffn ? 2 : 1) * inter, h}, {h, inter}};
  if (m.is_moe()) {
    const double e_inter =
        static_cast<double>(m.moe.expert_intermediate_size) / static_cast<double>(l.ExpertTp());
    s.expert_gemms = {{2 * e_inter, h}, {h, e_inter}};
    const double shared = static_cast<double>(m.moe.num_shared_experts * m.moe.shared_intermediate_size) / tp;
    if (shared > 0) s.shared_gemms = {{2 * shared, h}, {h, shared}};
    s.router_gemm = {static_cast<double>(m.moe.num_experts), h};
  }
  s.lm_head_gemm = {static_cast<double>(m.vocab_size) / tp, h};

  // Contiguous stages; the first layers % pp stages take one extra layer.
  const int64_t layers = m.num_layers();
  int64_t next = 0;
  for (int64_t stage = 0; stage < l.pp; ++stage) {
    const int64_t count = layers / l.pp + (stage < layers % l.pp ? 1 : 0);
    StageLayers st;
    st.first = stage == 0;
    st.last = stage == l.pp - 1;
    for (int64_t i = next; i < next + count; ++i) {
      (m.layers[i].moe ? st.moe : st.dense) += 1;
      st.windows.push_back(m.layers[i].sliding_window);
    }
    next += count;
    s.stages.push_back(std::move(st));
  }
  return s;
}

}  // namespace shardwise
