#include "stage_weights.h"

#include <fmt/format.h>

#include <cmath>
#include <functional>

#include "../fused_experts.h"
#include "shardwise/runtime/weight_matrix.h"

namespace shardwise {
namespace {

std::string LayerName(int64_t i, const std::string& rest) {
  return fmt::format("model.layers.{}.{}", i, rest);
}

// Tensor names of a MoE block by architecture: router, expert projections (gate, up, down).
struct MoeNames {
  std::string router, prefix, gate, up, down, shared;
};

MoeNames MoeNamesFor(const ModelSpec& m) {
  if (m.architecture == "MixtralForCausalLM") {
    return {"block_sparse_moe.gate.weight", "block_sparse_moe.experts", "w1", "w3", "w2", ""};
  }
  if (m.architecture == "GptOssForCausalLM") {
    return {"mlp.router.weight", "mlp.experts", "", "", "", ""};
  }
  const bool deepseek = m.architecture == "DeepseekV3ForCausalLM";
  return {"mlp.gate.weight", "mlp.experts",
          "gate_proj",       "up_proj",
          "down_proj",       deepseek ? "mlp.shared_experts." : "mlp.shared_expert."};
}

// Row blocks of tensors stacked into one matrix: rows `rows` of `name` ([shape_rows x cols]).
struct RowBlock {
  std::string name;
  int64_t shape_rows = 0;
  Slice rows;
};

// Reads a shard's tensors from the origin and hands them to the backend.
class ShardReader {
 public:
  ShardReader(WeightOrigin origin, WeightStorage storage, Kernels& kernels)
      : storage_(storage), kernels_(kernels), origin_(origin) {
    if (origin_.source == nullptr) {
      generated_ = GeneratedWeights(origin_.random_seed);  // small tensors: on the host
      source_ = generated_.get();
    } else {
      source_ = origin_.source;
    }
  }

  // The blocks stacked, all `cols` columns, in the run's weight storage (or `storage`).
  StatusOr<TensorPtr> Stacked(const std::vector<RowBlock>& blocks, int64_t cols,
                              std::optional<WeightStorage> storage = std::nullopt) {
    int64_t rows = 0;
    for (const RowBlock& b : blocks) rows += b.rows.size();
    if (origin_.source == nullptr) return Random(blocks.front().name, rows, cols);
    std::vector<float> values;
    values.reserve(static_cast<size_t>(rows * cols));
    for (const RowBlock& b : blocks) {
      SW_ASSIGN_OR_RETURN(std::vector<float> part,
                          source_->Read(b.name, b.shape_rows, cols, b.rows, {0, cols}));
      values.insert(values.end(), part.begin(), part.end());
    }
    return kernels_.Weights(
        WeightMatrix::Make(std::move(values), rows, cols, storage.value_or(storage_)));
  }

  // Rows `rs` and columns `cs` of one matrix (int8 scales over the unsharded rows).
  StatusOr<TensorPtr> Matrix(const std::string& name, int64_t shape_rows, int64_t shape_cols,
                             Slice rs, Slice cs,
                             std::optional<WeightStorage> storage = std::nullopt) {
    if (origin_.source == nullptr) return Random(name, rs.size(), cs.size());
    SW_ASSIGN_OR_RETURN(WeightMatrix m, ReadWeightMatrix(*source_, name, shape_rows, shape_cols, rs,
                                                         cs, storage.value_or(storage_)));
    return kernels_.Weights(std::move(m));
  }

  // fp32 values on the host.
  StatusOr<std::vector<float>> Host(const std::string& name, int64_t shape_rows, int64_t shape_cols,
                                    Slice rs, Slice cs) {
    return source_->Read(name, shape_rows, shape_cols, rs, cs);
  }
  StatusOr<TensorPtr> Floats(const std::string& name, int64_t shape_rows, int64_t shape_cols,
                             Slice rs, Slice cs) {
    SW_ASSIGN_OR_RETURN(std::vector<float> v, Host(name, shape_rows, shape_cols, rs, cs));
    return kernels_.Floats(std::move(v), rs.size(), cs.size());
  }
  StatusOr<TensorPtr> Vector(const std::string& name, int64_t n, Slice s) {
    return Floats(name, 1, n, {0, 1}, s);
  }

  WeightSource* source() const { return origin_.source; }
  WeightStorage storage() const { return storage_; }
  Kernels& kernels() { return kernels_; }

 private:
  StatusOr<TensorPtr> Random(const std::string& name, int64_t rows, int64_t cols) {
    const uint64_t seed = origin_.random_seed * 1000003ull + std::hash<std::string>()(name);
    return kernels_.RandomWeights(rows, cols, seed, 1.0f / std::sqrt(static_cast<float>(cols)),
                                  0.0f);
  }

  WeightStorage storage_;
  Kernels& kernels_;
  WeightOrigin origin_;
  std::unique_ptr<WeightSource> generated_;
  WeightSource* source_ = nullptr;
};

// One MLP shard: columns `part` of the FFN (rows of gate and up, columns of down).
StatusOr<MlpWeights> LoadMlp(ShardReader& r, const std::string& prefix, const std::string& g,
                             const std::string& u, const std::string& d, int64_t hidden,
                             int64_t inter, Slice part) {
  MlpWeights out;
  out.inter = part.size();
  SW_ASSIGN_OR_RETURN(out.gate_up, r.Stacked({{prefix + g + ".weight", inter, part},
                                              {prefix + u + ".weight", inter, part}},
                                             hidden));
  SW_ASSIGN_OR_RETURN(out.down, r.Matrix(prefix + d + ".weight", hidden, inter, {0, hidden}, part));
  return out;
}

// gpt-oss: one expert of the fused, biased tensors (fused_experts.h); one expert-TP rank adds
// the down bias.
StatusOr<MlpWeights> LoadFusedExpert(ShardReader& r, const ModelSpec& m, int64_t layer,
                                     int64_t expert, Slice part, bool down_bias) {
  const int64_t h = m.hidden_size, n = part.size();
  const bool int8 = r.storage() == WeightStorage::kInt8;
  SW_ASSIGN_OR_RETURN(
      ExpertShard s,
      ReadFusedExpert(*r.source(), LayerName(layer, "mlp.experts."), expert, m.moe.num_experts, h,
                      m.moe.expert_intermediate_size, part, down_bias, int8));
  MlpWeights out;
  out.inter = n;
  out.swiglu_limit = static_cast<float>(m.moe.swiglu_limit);
  std::vector<float> gate_up = std::move(s.gate);
  gate_up.insert(gate_up.end(), s.up.begin(), s.up.end());
  Kernels& k = r.kernels();
  SW_ASSIGN_OR_RETURN(out.gate_up,
                      k.Weights(WeightMatrix::Make(std::move(gate_up), 2 * n, h, r.storage())));
  SW_ASSIGN_OR_RETURN(out.down, k.Weights(WeightMatrix::Make(std::move(s.down), h, n, r.storage(),
                                                             s.down_row_abs_max)));
  std::vector<float> bias = std::move(s.gate_bias);
  bias.insert(bias.end(), s.up_bias.begin(), s.up_bias.end());
  SW_ASSIGN_OR_RETURN(out.gate_up_bias, k.Floats(std::move(bias), 1, 2 * n));
  if (!s.down_bias.empty()) {
    SW_ASSIGN_OR_RETURN(out.down_bias, k.Floats(std::move(s.down_bias), 1, h));
  }
  return out;
}

StatusOr<GqaWeights> LoadGqa(ShardReader& r, const ModelSpec& m, const RankShard& shard, int64_t i,
                             int64_t sequences, int64_t cache_tokens) {
  const int64_t h = m.hidden_size, hd = m.head_dim;
  const Slice q_rows{shard.heads.heads.begin * hd, shard.heads.heads.end * hd};
  const Slice kv_rows{shard.heads.kv_heads.begin * hd, shard.heads.kv_heads.end * hd};
  const int64_t q_width = m.num_heads * hd, kv_width = m.num_kv_heads * hd;
  Kernels& k = r.kernels();
  GqaWeights g;
  SW_ASSIGN_OR_RETURN(g.qkv,
                      r.Stacked({{LayerName(i, "self_attn.q_proj.weight"), q_width, q_rows},
                                 {LayerName(i, "self_attn.k_proj.weight"), kv_width, kv_rows},
                                 {LayerName(i, "self_attn.v_proj.weight"), kv_width, kv_rows}},
                                h));
  SW_ASSIGN_OR_RETURN(
      g.o, r.Matrix(LayerName(i, "self_attn.o_proj.weight"), h, q_width, {0, h}, q_rows));
  if (m.qkv_bias) {
    std::vector<float> bias;
    for (const auto& [name, width, rows] :
         {std::tuple{"q_proj", q_width, q_rows}, std::tuple{"k_proj", kv_width, kv_rows},
          std::tuple{"v_proj", kv_width, kv_rows}}) {
      SW_ASSIGN_OR_RETURN(
          std::vector<float> part,
          r.Host(LayerName(i, fmt::format("self_attn.{}.bias", name)), 1, width, {0, 1}, rows));
      bias.insert(bias.end(), part.begin(), part.end());
    }
    const int64_t n = static_cast<int64_t>(bias.size());
    SW_ASSIGN_OR_RETURN(g.qkv_bias, k.Floats(std::move(bias), 1, n));
  }
  if (m.o_bias && shard.place.tp_index == 0) {  // added once, before the all-reduce
    SW_ASSIGN_OR_RETURN(g.o_bias, r.Vector(LayerName(i, "self_attn.o_proj.bias"), h, {0, h}));
  }
  if (m.qk_norm == QkNorm::kPerHead) {
    SW_ASSIGN_OR_RETURN(g.q_norm, r.Vector(LayerName(i, "self_attn.q_norm.weight"), hd, {0, hd}));
    SW_ASSIGN_OR_RETURN(g.k_norm, r.Vector(LayerName(i, "self_attn.k_norm.weight"), hd, {0, hd}));
  }
  const int64_t kw = shard.heads.kv_heads.size() * hd;
  SW_ASSIGN_OR_RETURN(g.k_cache, k.Alloc(TensorKind::kCache, sequences * cache_tokens, kw));
  SW_ASSIGN_OR_RETURN(g.v_cache, k.Alloc(TensorKind::kCache, sequences * cache_tokens, kw));
  return g;
}

// MLA's projections, norms and cache (the projections stay fp32 in every weight storage).
StatusOr<MlaWeights> LoadMla(ShardReader& r, const ModelSpec& m, const RankShard& shard, int64_t i,
                             int64_t sequences, int64_t cache_tokens) {
  const MlaSpec& s = *m.mla;
  const int64_t h = m.hidden_size, qk = s.qk_nope_head_dim + s.qk_rope_head_dim;
  const int64_t kvb = s.qk_nope_head_dim + s.v_head_dim, rank = s.kv_lora_rank;
  const Range heads = shard.heads.heads;
  auto name = [&](const std::string& rest) { return LayerName(i, "self_attn." + rest); };
  const Slice all_h{0, h}, q_rows{heads.begin * qk, heads.end * qk};
  constexpr WeightStorage kFp32 = WeightStorage::kFp32;
  MlaWeights a;
  if (s.q_lora_rank > 0) {
    const int64_t ql = s.q_lora_rank;
    SW_ASSIGN_OR_RETURN(a.q_a, r.Matrix(name("q_a_proj.weight"), ql, h, {0, ql}, all_h, kFp32));
    SW_ASSIGN_OR_RETURN(a.q_a_norm, r.Vector(name("q_a_layernorm.weight"), ql, {0, ql}));
    SW_ASSIGN_OR_RETURN(
        a.q_b, r.Matrix(name("q_b_proj.weight"), m.num_heads * qk, ql, q_rows, {0, ql}, kFp32));
  } else {
    SW_ASSIGN_OR_RETURN(a.q_b,
                        r.Matrix(name("q_proj.weight"), m.num_heads * qk, h, q_rows, all_h, kFp32));
  }
  const int64_t w = rank + s.qk_rope_head_dim;
  SW_ASSIGN_OR_RETURN(a.kv_a,
                      r.Matrix(name("kv_a_proj_with_mqa.weight"), w, h, {0, w}, all_h, kFp32));
  SW_ASSIGN_OR_RETURN(a.kv_a_norm, r.Vector(name("kv_a_layernorm.weight"), rank, {0, rank}));
  SW_ASSIGN_OR_RETURN(a.kv_b, r.Matrix(name("kv_b_proj.weight"), m.num_heads * kvb, rank,
                                       {heads.begin * kvb, heads.end * kvb}, {0, rank}, kFp32));
  SW_ASSIGN_OR_RETURN(a.o, r.Matrix(name("o_proj.weight"), h, m.num_heads * s.v_head_dim, all_h,
                                    {heads.begin * s.v_head_dim, heads.end * s.v_head_dim}, kFp32));
  SW_ASSIGN_OR_RETURN(a.cache, r.kernels().Alloc(TensorKind::kCache, sequences * cache_tokens, w));
  return a;
}

StatusOr<MoeWeights> LoadMoe(ShardReader& r, const ModelSpec& m, const RankShard& shard,
                             const ExpertPlacement& placement, int64_t i) {
  const int64_t h = m.hidden_size, experts = m.moe.num_experts;
  const MoeNames names = MoeNamesFor(m);
  MoeWeights moe;
  SW_ASSIGN_OR_RETURN(moe.router,
                      r.Floats(LayerName(i, names.router), experts, h, {0, experts}, {0, h}));
  if (m.moe.router_score_bias) {
    SW_ASSIGN_OR_RETURN(moe.score_bias, r.Host(LayerName(i, "mlp.gate.e_score_correction_bias"), 1,
                                               experts, {0, 1}, {0, experts}));
  }
  if (m.moe.router_bias) {
    SW_ASSIGN_OR_RETURN(moe.router_bias,
                        r.Vector(LayerName(i, "mlp.router.bias"), experts, {0, experts}));
  }
  const Slice part{shard.expert_ffn.begin, shard.expert_ffn.end};
  const Range slots = ExpertSlots(placement, shard.expert.ep_index);
  for (int64_t slot = slots.begin; slot < slots.end; ++slot) {
    const int64_t e = placement.slot_expert[static_cast<size_t>(slot)];
    if (m.moe.expert_bias) {
      SW_ASSIGN_OR_RETURN(MlpWeights ex,
                          LoadFusedExpert(r, m, i, e, part, shard.expert.etp_index == 0));
      moe.experts.push_back(std::move(ex));
    } else {
      SW_ASSIGN_OR_RETURN(
          MlpWeights ex,
          LoadMlp(r, LayerName(i, fmt::format("{}.{}.", names.prefix, e)), names.gate, names.up,
                  names.down, h, m.moe.expert_intermediate_size, part));
      moe.experts.push_back(std::move(ex));
    }
  }
  if (m.moe.num_shared_experts > 0) {
    // DeepSeek keeps its shared experts as one MLP of their summed width.
    const int64_t is = m.moe.shared_intermediate_size * m.moe.num_shared_experts;
    SW_ASSIGN_OR_RETURN(
        moe.shared, LoadMlp(r, LayerName(i, names.shared), "gate_proj", "up_proj", "down_proj", h,
                            is, {shard.shared_ffn.begin, shard.shared_ffn.end}));
    if (m.moe.shared_expert_gate) {
      SW_ASSIGN_OR_RETURN(moe.shared_gate, r.Floats(LayerName(i, "mlp.shared_expert_gate.weight"),
                                                    1, h, {0, 1}, {0, h}));
    }
  }
  return moe;
}

StatusOr<LayerWeights> LoadLayer(ShardReader& r, const ModelSpec& m, const RankShard& shard,
                                 const ExpertPlacement& placement, int64_t i, int64_t sequences,
                                 int64_t cache_tokens) {
  const int64_t h = m.hidden_size;
  const Range heads = shard.heads.heads;
  LayerWeights L;
  L.window = m.layers[static_cast<size_t>(i)].sliding_window;
  if (m.attention_sinks) {
    SW_ASSIGN_OR_RETURN(
        L.sinks, r.Vector(LayerName(i, "self_attn.sinks"), m.num_heads, {heads.begin, heads.end}));
  }
  SW_ASSIGN_OR_RETURN(L.input_norm, r.Vector(LayerName(i, "input_layernorm.weight"), h, {0, h}));
  SW_ASSIGN_OR_RETURN(L.post_norm,
                      r.Vector(LayerName(i, "post_attention_layernorm.weight"), h, {0, h}));
  if (m.mla) {
    SW_ASSIGN_OR_RETURN(L.mla, LoadMla(r, m, shard, i, sequences, cache_tokens));
  } else {
    SW_ASSIGN_OR_RETURN(L.gqa, LoadGqa(r, m, shard, i, sequences, cache_tokens));
  }
  if (!m.layers[static_cast<size_t>(i)].moe()) {
    SW_ASSIGN_OR_RETURN(L.mlp, LoadMlp(r, LayerName(i, "mlp."), "gate_proj", "up_proj", "down_proj",
                                       h, m.intermediate_size, {shard.ffn.begin, shard.ffn.end}));
  } else {
    SW_ASSIGN_OR_RETURN(L.moe, LoadMoe(r, m, shard, placement, i));
  }
  return L;
}

}  // namespace

StatusOr<StageWeights> LoadStageWeights(const ModelSpec& m, const RankShard& shard,
                                        const ExpertPlacement& placement, WeightOrigin origin,
                                        WeightStorage storage, Kernels& kernels, int64_t sequences,
                                        int64_t cache_tokens) {
  if (origin.source == nullptr && m.moe.expert_bias) {
    return Error(m.name + ": generated device weights do not cover fused, biased experts");
  }
  ShardReader r(origin, storage, kernels);
  StageWeights out;
  for (int64_t i = shard.layers.begin; i < shard.layers.end; ++i) {
    SW_ASSIGN_OR_RETURN(LayerWeights L,
                        LoadLayer(r, m, shard, placement, i, sequences, cache_tokens));
    out.layers.push_back(std::move(L));
  }
  const int64_t h = m.hidden_size, vocab = m.vocab_size;
  if (shard.first_stage) {
    SW_ASSIGN_OR_RETURN(out.embed,
                        r.Matrix("model.embed_tokens.weight", vocab, h, {0, vocab}, {0, h}));
  }
  if (shard.last_stage) {
    SW_ASSIGN_OR_RETURN(out.final_norm, r.Vector("model.norm.weight", h, {0, h}));
    const std::string head = m.tie_word_embeddings ? "model.embed_tokens.weight" : "lm_head.weight";
    // TP splits the LM head by vocabulary rows, each share zero-padded to the widest.
    const VocabShard part = shard.vocab;
    if (origin.source == nullptr) {
      SW_ASSIGN_OR_RETURN(out.lm_head, r.Matrix(head, vocab, h, {0, part.padded_rows}, {0, h}));
    } else {
      SW_ASSIGN_OR_RETURN(std::vector<float> rows,
                          r.Host(head, vocab, h, {part.rows.begin, part.rows.end}, {0, h}));
      rows.resize(static_cast<size_t>(part.padded_rows * h), 0.0f);
      SW_ASSIGN_OR_RETURN(out.lm_head, kernels.Weights(WeightMatrix::Make(
                                           std::move(rows), part.padded_rows, h, storage)));
    }
  }
  return out;
}

}  // namespace shardwise
