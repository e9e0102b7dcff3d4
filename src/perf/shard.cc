#include "shardwise/perf/shard.h"

#include <algorithm>

#include "shardwise/layout/shard_geometry.h"
#include "shardwise/model/accounting.h"
#include "shardwise/perf/moe.h"

namespace shardwise {
namespace {

// Attention parameters that every TP rank holds whole: MLA's down-projections (to the Q and
// KV latents) and their norms; everything else splits by heads.
// MLA's down-projections and the DSA indexer (engines keep both whole on every TP rank).
double ReplicatedAttentionParams(const ModelSpec& m) {
  const double indexer = static_cast<double>(IndexerParamsPerLayer(m));
  if (!m.mla) return indexer;
  const MlaSpec& a = *m.mla;
  return indexer + static_cast<double>(m.hidden_size * a.q_lora_rank + a.q_lora_rank +
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
  s.ffn_width =
      m.num_moe_layers() < m.num_layers() ? static_cast<double>(m.intermediate_size) / tp : 0.0;
  if (m.is_moe()) {
    const double etp = static_cast<double>(l.ExpertTp());
    s.expert_params = static_cast<double>(ParamsPerExpert(m)) / etp;
    // Redundant copies only exist inside an EP group (ValidateLayout).
    const int64_t redundant = l.ep > 1 ? o.redundant_experts : 0;
    s.experts_per_gpu =
        static_cast<double>(m.moe.num_experts + redundant) / static_cast<double>(l.ep);
    // Loads of the routed experts (one vector per layer, or one for all), with any always-
    // selected (shared) experts in front at one token in every token's share.
    const int64_t always = m.moe.always_selected;
    const int64_t routed = m.moe.num_experts - always;
    std::vector<std::vector<double>> layers = o.expert_loads;
    if (layers.empty() && (redundant > 0 || o.expert_skew || always > 0)) {
      layers.push_back(ZipfExpertLoads(routed, o.expert_skew.value_or(0.0)));
    }
    if (!layers.empty()) {
      // Each layer placed on its own (EPLB balances layer by layer); the step pays the mean of
      // the layers' busiest-rank loads.
      double sum = 0;
      for (std::vector<double>& load : layers) {
        if (always > 0) {
          double routed_total = 0;
          for (double x : load) routed_total += x;
          const double per_token =
              routed_total / static_cast<double>(m.moe.experts_per_token - always);
          load.insert(load.begin(), static_cast<size_t>(always), per_token);
        }
        sum += PlacementImbalance(m.moe.num_experts, l.ep, redundant, load);
      }
      s.expert_placement_imbalance = sum / static_cast<double>(layers.size());
    }
    s.shared_params = static_cast<double>(m.moe.num_shared_experts * 3 * m.hidden_size *
                                          m.moe.shared_intermediate_size) /
                      tp;
    s.router_params = static_cast<double>(m.hidden_size * m.moe.num_experts);
    s.ffn_width = std::max(
        s.ffn_width,
        static_cast<double>(m.moe.expert_intermediate_size * m.moe.experts_per_token) / etp);
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
  // Decode runs MLA in the absorbed form (DeepSeek-V2 Technical Report, 2.1.2; FlashMLA in
  // vLLM, SGLang and TensorRT-LLM): W_UK folds into each head's query and W_UV applies after
  // the attention, so the query meets the cached latent and rope key (kv_lora_rank +
  // qk_rope_head_dim) and the output stays in the latent (kv_lora_rank). The per-token
  // projections keep their FLOPs (attention_gemms); prefill keeps the unabsorbed form above.
  s.decode_attention_flops_per_key =
      m.mla ? 2.0 * s.heads * static_cast<double>(2 * m.mla->kv_lora_rank + m.mla->qk_rope_head_dim)
            : s.attention_flops_per_key;
  if (m.indexer) {
    const SparseIndexerSpec& x = *m.indexer;
    s.sparse_topk = x.topk;
    // Dot products of index_head_dim per index head, then a weighted sum over the heads.
    s.indexer_flops_per_key = 2.0 * static_cast<double>(x.index_heads * (x.index_head_dim + 1));
    s.indexer_key_bytes_per_token = IndexerKeyBytesPerToken(m, o.kv_dtype);
  }
  if (m.recurrent && m.num_recurrent_layers() > 0) {
    const RecurrentSpec& r = *m.recurrent;
    s.recurrent_params = static_cast<double>(RecurrentParamsPerLayer(m)) / tp;
    s.state_bytes_per_sequence = StateBytesPerSequencePerLayer(m) / tp;
    s.recurrent_decode_flops = RecurrentDecodeFlopsPerToken(m) / tp;
    s.recurrent_prefill_flops = RecurrentPrefillFlopsPerToken(m) / tp;
    s.recurrent_chunk_tokens = r.chunk_size;
    const double h = static_cast<double>(m.hidden_size);
    const double value_width = static_cast<double>(r.num_heads * r.head_dim);
    const double in_width = static_cast<double>(RecurrentConvChannels(m)) + value_width;
    s.recurrent_gemms = {{in_width / tp, h}, {h, value_width / tp}};
  }

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
  if (m.indexer) {  // the indexer's wq_b (from the Q latent), wk and weights_proj, whole
    const SparseIndexerSpec& x = *m.indexer;
    const double q_in =
        m.mla && m.mla->q_lora_rank > 0 ? static_cast<double>(m.mla->q_lora_rank) : h;
    s.attention_gemms.push_back({static_cast<double>(x.index_heads * x.index_head_dim), q_in});
    s.attention_gemms.push_back({static_cast<double>(x.index_head_dim), h});
    s.attention_gemms.push_back({static_cast<double>(x.index_heads), h});
  }
  const double inter = static_cast<double>(m.intermediate_size) / tp;
  s.dense_ffn_gemms = {{(m.gated_ffn ? 2 : 1) * inter, h}, {h, inter}};
  if (m.is_moe()) {
    const double e_inter =
        static_cast<double>(m.moe.expert_intermediate_size) / static_cast<double>(l.ExpertTp());
    s.expert_gemms = {{2 * e_inter, h}, {h, e_inter}};
    const double shared =
        static_cast<double>(m.moe.num_shared_experts * m.moe.shared_intermediate_size) / tp;
    if (shared > 0) s.shared_gemms = {{2 * shared, h}, {h, shared}};
    s.router_gemm = {static_cast<double>(m.moe.num_experts), h};
  }
  s.lm_head_gemm = {static_cast<double>(m.vocab_size) / tp, h};
  if (o.weight_formats) {
    const WeightFormats& f = *o.weight_formats;
    auto stamp = [](std::vector<GemmShape>& gemms, const WeightFormat& format) {
      for (GemmShape& g : gemms) g.weight_bytes_per_param = format.bytes_per_param;
    };
    stamp(s.attention_gemms, f.mixer);
    stamp(s.recurrent_gemms, f.mixer);
    stamp(s.dense_ffn_gemms, f.dense_ffn);
    stamp(s.expert_gemms, f.routed_experts);
    stamp(s.shared_gemms, f.shared_experts);
    s.router_gemm.weight_bytes_per_param = f.router.bytes_per_param;
    s.lm_head_gemm.weight_bytes_per_param = f.lm_head.bytes_per_param;
  }

  for (int64_t stage = 0; stage < l.pp; ++stage) {
    const Range range = StageLayerRange(m.num_layers(), l.pp, stage);
    StageLayers st;
    st.first = stage == 0;
    st.last = stage == l.pp - 1;
    for (int64_t i = range.begin; i < range.end; ++i) {
      const LayerSpec& layer = m.layers[i];
      (layer.ffn == FfnKind::kMoe     ? st.moe
       : layer.ffn == FfnKind::kDense ? st.dense
                                      : st.no_ffn) += 1;
      st.mixers.push_back(layer.mixer);
      st.windows.push_back(layer.sliding_window);
    }
    s.stages.push_back(std::move(st));
  }
  return s;
}

}  // namespace shardwise
