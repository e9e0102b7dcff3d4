#include "shardwise/runtime/rank_model.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "capacity.h"
#include "fused_experts.h"
#include "routing.h"
#include "shardwise/common/format.h"
#include "shardwise/model/accounting.h"
#include "shardwise/runtime/kernels.h"
#include "shardwise/runtime/rope.h"

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

}  // namespace

RankPlacement PlaceRank(const Layout& l, int world_rank) {
  RankPlacement p;
  p.world_rank = world_rank;
  p.tp_index = world_rank % static_cast<int>(l.tp);
  p.cp_index = (world_rank / static_cast<int>(l.tp)) % static_cast<int>(l.cp);
  const int rest = world_rank / static_cast<int>(l.tp * l.cp);
  p.dp_index = rest % static_cast<int>(l.dp);
  p.stage = rest / static_cast<int>(l.dp);
  const int adp = static_cast<int>(l.AttentionDp());
  p.replica = p.dp_index / adp;
  p.adp_index = p.dp_index % adp;
  p.stage_rank =
      (p.adp_index * static_cast<int>(l.cp) + p.cp_index) * static_cast<int>(l.tp) + p.tp_index;
  return p;
}

Status CheckRuntimeSupport(const ModelSpec& m, const Layout& l) {
  SW_RETURN_IF_ERROR(ValidateLayout(l, m));
  SW_RETURN_IF_ERROR(CheckRopeScaling(m));
  const std::string why = m.num_recurrent_layers() > 0 ? "linear-attention or SSM layers"
                          : m.num_attention_layers() < m.num_layers() ? "a hybrid layer pattern"
                          : m.indexer                                 ? "sparse attention (DSA)"
                          : m.attention_output_gate                   ? "gated attention output"
                          : m.qk_norm == QkNorm::kPerLayer            ? "per-layer Q/K norms"
                          : !m.gated_ffn ? "a GELU MLP with LayerNorm (GPT-2 style)"
                                         : "";
  if (!why.empty()) {
    return Error(fmt::format("the runtime does not execute {} ({}) yet", m.name, why));
  }
  if (m.is_moe() &&
      m.moe.groups_per_token * (m.moe.num_experts / m.moe.num_groups) < m.moe.experts_per_token) {
    return Error(
        fmt::format("{}: topk_group ({}) groups of {} experts cannot supply {} experts "
                    "per token",
                    m.name, m.moe.groups_per_token, m.moe.num_experts / m.moe.num_groups,
                    m.moe.experts_per_token));
  }
  if (m.num_moe_layers() > 0 && m.num_moe_layers() < m.num_layers() && l.ep > 1 &&
      m.intermediate_size % l.tp != 0) {
    return Error("the dense layers' FFN width must divide by tp");
  }
  return Status();
}

void RankModel::Mlp::Apply(const float* h, float* y, int64_t rows, int64_t hidden,
                           ThreadPool* pool) const {
  std::vector<float> g(static_cast<size_t>(rows * inter)), u(static_cast<size_t>(rows * inter));
  std::vector<float> d(static_cast<size_t>(rows * hidden));
  auto bias = [](const std::vector<float>& b) { return b.empty() ? nullptr : b.data(); };
  kernels::MatMulT(h, gate, g.data(), rows, bias(gate_bias), pool);
  kernels::MatMulT(h, up, u.data(), rows, bias(up_bias), pool);
  if (swiglu_limit > 0) {
    kernels::ClampedSwigluMul(g.data(), u.data(), rows * inter, swiglu_limit);
  } else {
    kernels::SiluMul(g.data(), u.data(), rows * inter);
  }
  kernels::MatMulT(g.data(), down, d.data(), rows, bias(down_bias), pool);
  for (size_t i = 0; i < d.size(); ++i) y[i] += d[i];
}

StatusOr<RankModel> RankModel::Load(const ModelSpec& m, const Layout& l, const RankPlacement& p,
                                    WeightSource& w, int64_t sequences, int64_t cache_tokens,
                                    const MoeRunOptions& moe_options,
                                    const KernelOptions& kernel_options) {
  SW_RETURN_IF_ERROR(CheckRuntimeSupport(m, l));
  RankModel r;
  r.pool_ = std::make_unique<ThreadPool>(kernel_options.threads);
  const WeightStorage storage = kernel_options.weights;
  r.model_ = m;
  r.layout_ = l;
  r.place_ = p;
  r.cache_tokens_ = cache_tokens;
  r.moe_options_ = moe_options;
  if (m.is_moe()) {
    SW_ASSIGN_OR_RETURN(r.placement_, PlaceExperts(m.moe.num_experts, l.ep,
                                                   l.ep > 1 ? moe_options.redundant_experts : 0));
  }
  r.cached_.assign(static_cast<size_t>(sequences), {});
  const int64_t layers = m.num_layers();
  r.layer_begin_ = p.stage * (layers / l.pp) + std::min<int64_t>(p.stage, layers % l.pp);
  r.layer_end_ = r.layer_begin_ + layers / l.pp + (p.stage < layers % l.pp ? 1 : 0);
  const int64_t h = m.hidden_size, hd = m.head_dim, tp = l.tp;
  r.heads_ = m.num_heads / tp;
  r.head_begin_ = p.tp_index * r.heads_;
  const int64_t group = m.num_heads / m.num_kv_heads;
  r.kv_begin_ = r.head_begin_ / group;
  r.kv_heads_ = (r.head_begin_ + r.heads_ - 1) / group - r.kv_begin_ + 1;
  const Slice all_h{0, h};
  auto read = [&](const std::string& name, int64_t rows, int64_t cols, Slice rs, Slice cs) {
    return w.Read(name, rows, cols, rs, cs);
  };
  // A matrix in the run's weight storage.
  auto matrix = [&](const std::string& name, int64_t rows, int64_t cols, Slice rs, Slice cs) {
    return ReadWeightMatrix(w, name, rows, cols, rs, cs, storage);
  };
  auto vec = [&](const std::string& name, int64_t n, Slice s) {
    return w.Read(name, 1, n, {0, 1}, s);
  };
  // One MLP shard: rows [i0, i1) of gate/up, the same columns of down.
  auto mlp = [&](const std::string& prefix, const std::string& g, const std::string& u,
                 const std::string& d, int64_t inter, Slice part) -> StatusOr<Mlp> {
    Mlp out;
    out.inter = part.size();
    SW_ASSIGN_OR_RETURN(out.gate, matrix(prefix + g + ".weight", inter, h, part, all_h));
    SW_ASSIGN_OR_RETURN(out.up, matrix(prefix + u + ".weight", inter, h, part, all_h));
    SW_ASSIGN_OR_RETURN(out.down, matrix(prefix + d + ".weight", h, inter, all_h, part));
    return out;
  };

  const Slice q_rows{r.head_begin_ * hd, (r.head_begin_ + r.heads_) * hd};
  const Slice kv_rows{r.kv_begin_ * hd, (r.kv_begin_ + r.kv_heads_) * hd};
  const int64_t q_width = m.num_heads * hd, kv_width = m.num_kv_heads * hd;
  const MoeNames moe_names = MoeNamesFor(m);
  for (int64_t i = r.layer_begin_; i < r.layer_end_; ++i) {
    Layer L;
    L.window = m.layers[i].sliding_window;
    if (m.attention_sinks) {
      SW_ASSIGN_OR_RETURN(L.sinks, vec(LayerName(i, "self_attn.sinks"), m.num_heads,
                                       {r.head_begin_, r.head_begin_ + r.heads_}));
    }
    SW_ASSIGN_OR_RETURN(L.input_norm, vec(LayerName(i, "input_layernorm.weight"), h, all_h));
    SW_ASSIGN_OR_RETURN(L.post_norm,
                        vec(LayerName(i, "post_attention_layernorm.weight"), h, all_h));
    if (m.mla) {
      SW_ASSIGN_OR_RETURN(MlaAttention mla, MlaAttention::Load(m, i, r.head_begin_, r.heads_, w,
                                                               sequences, cache_tokens));
      L.mla = std::move(mla);
    } else {
      SW_ASSIGN_OR_RETURN(
          L.q, matrix(LayerName(i, "self_attn.q_proj.weight"), q_width, h, q_rows, all_h));
      SW_ASSIGN_OR_RETURN(
          L.k, matrix(LayerName(i, "self_attn.k_proj.weight"), kv_width, h, kv_rows, all_h));
      SW_ASSIGN_OR_RETURN(
          L.v, matrix(LayerName(i, "self_attn.v_proj.weight"), kv_width, h, kv_rows, all_h));
      SW_ASSIGN_OR_RETURN(
          L.o, matrix(LayerName(i, "self_attn.o_proj.weight"), h, q_width, all_h, q_rows));
      if (m.qkv_bias) {
        SW_ASSIGN_OR_RETURN(L.q_bias, vec(LayerName(i, "self_attn.q_proj.bias"), q_width, q_rows));
        SW_ASSIGN_OR_RETURN(L.k_bias,
                            vec(LayerName(i, "self_attn.k_proj.bias"), kv_width, kv_rows));
        SW_ASSIGN_OR_RETURN(L.v_bias,
                            vec(LayerName(i, "self_attn.v_proj.bias"), kv_width, kv_rows));
      }
      if (m.o_bias && p.tp_index == 0) {  // added once, before the all-reduce
        SW_ASSIGN_OR_RETURN(L.o_bias, vec(LayerName(i, "self_attn.o_proj.bias"), h, all_h));
      }
      if (m.qk_norm == QkNorm::kPerHead) {
        SW_ASSIGN_OR_RETURN(L.q_norm, vec(LayerName(i, "self_attn.q_norm.weight"), hd, {0, hd}));
        SW_ASSIGN_OR_RETURN(L.k_norm, vec(LayerName(i, "self_attn.k_norm.weight"), hd, {0, hd}));
      }
      const size_t cache = static_cast<size_t>(sequences * cache_tokens * r.kv_heads_ * hd);
      L.k_cache.assign(cache, 0.0f);
      L.v_cache.assign(cache, 0.0f);
    }
    if (!m.layers[i].moe()) {
      const int64_t part = m.intermediate_size / tp;
      SW_ASSIGN_OR_RETURN(
          L.mlp, mlp(LayerName(i, "mlp."), "gate_proj", "up_proj", "down_proj", m.intermediate_size,
                     {p.tp_index * part, (p.tp_index + 1) * part}));
    } else {
      const int64_t experts = m.moe.num_experts;
      SW_ASSIGN_OR_RETURN(L.router,
                          read(LayerName(i, moe_names.router), experts, h, {0, experts}, all_h));
      if (m.moe.router_score_bias) {
        SW_ASSIGN_OR_RETURN(L.score_bias, vec(LayerName(i, "mlp.gate.e_score_correction_bias"),
                                              experts, {0, experts}));
      }
      // Expert ownership: EP index = stage_rank / expert-TP; the expert-TP index picks the slice.
      const int64_t etp = l.ep > 1 ? l.ExpertTp() : tp;
      const int64_t ep_index = l.ep > 1 ? p.stage_rank / etp : 0;
      const int64_t etp_index = l.ep > 1 ? p.stage_rank % etp : p.tp_index;
      r.ep_index_ = ep_index;
      const int64_t slots = r.placement_.slots_per_rank;
      const int64_t ie = m.moe.expert_intermediate_size, part = ie / etp;
      if (m.moe.router_bias) {
        SW_ASSIGN_OR_RETURN(L.router_bias,
                            vec(LayerName(i, "mlp.router.bias"), experts, {0, experts}));
      }
      const Slice expert_part{etp_index * part, (etp_index + 1) * part};
      for (int64_t slot = ep_index * slots; slot < (ep_index + 1) * slots; ++slot) {
        const int64_t e = r.placement_.slot_expert[slot];
        Mlp ex;
        if (m.moe.expert_bias) {  // gpt-oss: fused, biased experts; one expert-TP rank adds the
                                  // down bias
          const bool int8 = storage == WeightStorage::kInt8;
          SW_ASSIGN_OR_RETURN(ExpertShard s,
                              ReadFusedExpert(w, LayerName(i, "mlp.experts."), e, experts, h, ie,
                                              expert_part, etp_index == 0, int8));
          ex.inter = part;
          ex.gate = WeightMatrix::Make(std::move(s.gate), part, h, storage);
          ex.up = WeightMatrix::Make(std::move(s.up), part, h, storage);
          ex.down = WeightMatrix::Make(std::move(s.down), h, part, storage, s.down_row_abs_max);
          ex.gate_bias = std::move(s.gate_bias);
          ex.up_bias = std::move(s.up_bias);
          ex.down_bias = std::move(s.down_bias);
          ex.swiglu_limit = static_cast<float>(m.moe.swiglu_limit);
        } else {
          SW_ASSIGN_OR_RETURN(
              ex, mlp(LayerName(i, fmt::format("{}.{}.", moe_names.prefix, e)), moe_names.gate,
                      moe_names.up, moe_names.down, ie, expert_part));
        }
        L.experts.push_back(std::move(ex));
      }
      if (m.moe.num_shared_experts > 0) {
        // DeepSeek keeps its shared experts as one MLP of their summed width.
        const int64_t is = m.moe.shared_intermediate_size * m.moe.num_shared_experts,
                      spart = is / tp;
        SW_ASSIGN_OR_RETURN(
            L.shared, mlp(LayerName(i, moe_names.shared), "gate_proj", "up_proj", "down_proj", is,
                          {p.tp_index * spart, (p.tp_index + 1) * spart}));
        if (m.moe.shared_expert_gate) {
          SW_ASSIGN_OR_RETURN(L.shared_gate, read(LayerName(i, "mlp.shared_expert_gate.weight"), 1,
                                                  h, {0, 1}, all_h));
        }
      }
    }
    r.layers_.push_back(std::move(L));
  }
  const int64_t vocab = m.vocab_size;
  if (r.first_stage()) {
    SW_ASSIGN_OR_RETURN(r.embed_, matrix("model.embed_tokens.weight", vocab, h, {0, vocab}, all_h));
  }
  if (r.last_stage()) {
    SW_ASSIGN_OR_RETURN(r.final_norm_, vec("model.norm.weight", h, all_h));
    const std::string head = m.tie_word_embeddings ? "model.embed_tokens.weight" : "lm_head.weight";
    // TP splits the LM head by vocabulary rows (the last rank's share may be short).
    const int64_t part = (vocab + tp - 1) / tp;
    const int64_t begin = std::min(vocab, p.tp_index * part);
    const int64_t end = std::min(vocab, begin + part);
    r.lm_head_rows_ = part;
    SW_ASSIGN_OR_RETURN(std::vector<float> rows, read(head, vocab, h, {begin, end}, all_h));
    rows.resize(static_cast<size_t>(part * h), 0.0f);
    r.lm_head_ = WeightMatrix::Make(std::move(rows), part, h, storage);
  }
  return r;
}

void RankModel::Embed(const std::vector<int64_t>& tokens, std::vector<float>& x) const {
  const int64_t h = model_.hidden_size;
  x.assign(tokens.size() * static_cast<size_t>(h), 0.0f);
  for (size_t t = 0; t < tokens.size(); ++t) embed_.DecodeRow(tokens[t], x.data() + t * h);
}

Status RankModel::Attention(Layer& L, const std::vector<float>& hin, std::vector<float>& out,
                            const std::vector<int>& seqs, const AttentionStep& step) {
  const int64_t h = model_.hidden_size, hd = model_.head_dim;
  const int64_t len = static_cast<int64_t>(step.positions.size());
  const int64_t rows = static_cast<int64_t>(seqs.size()) * len;
  out.assign(static_cast<size_t>(rows * h), 0.0f);
  if (L.mla) return L.mla->Forward(hin.data(), out.data(), seqs, step);
  const int64_t qw = heads_ * hd, kw = kv_heads_ * hd;
  std::vector<float> q(static_cast<size_t>(rows * qw)), k(static_cast<size_t>(rows * kw)),
      v(static_cast<size_t>(rows * kw));
  auto bias = [](const std::vector<float>& b) { return b.empty() ? nullptr : b.data(); };
  ThreadPool* pool = pool_.get();
  kernels::MatMulT(hin.data(), L.q, q.data(), rows, bias(L.q_bias), pool);
  kernels::MatMulT(hin.data(), L.k, k.data(), rows, bias(L.k_bias), pool);
  kernels::MatMulT(hin.data(), L.v, v.data(), rows, bias(L.v_bias), pool);
  if (!L.q_norm.empty()) {  // Qwen3: RMSNorm over each head before RoPE
    kernels::RmsNorm(q.data(), L.q_norm.data(), q.data(), rows * heads_, hd, model_.rms_norm_eps);
    kernels::RmsNorm(k.data(), L.k_norm.data(), k.data(), rows * kv_heads_, hd,
                     model_.rms_norm_eps);
  }
  const RopeFrequencies rope = ComputeRopeFrequencies(model_, hd, step.context);
  for (size_t si = 0; si < seqs.size(); ++si) {
    const int64_t s = seqs[si];
    for (int64_t t = 0; t < len; ++t) {
      const int64_t row = static_cast<int64_t>(si) * len + t, p = step.positions[t];
      kernels::Rope(q.data() + row * qw, heads_, hd, hd, p, rope.inv_freq.data(),
                    rope.attention_factor, false);
      kernels::Rope(k.data() + row * kw, kv_heads_, hd, hd, p, rope.inv_freq.data(),
                    rope.attention_factor, false);
      const int64_t slot = step.store_slot[t];
      if (slot < 0) continue;
      std::copy_n(k.data() + row * kw, kw, L.k_cache.data() + (s * cache_tokens_ + slot) * kw);
      std::copy_n(v.data() + row * kw, kw, L.v_cache.data() + (s * cache_tokens_ + slot) * kw);
    }
  }
  const int64_t group = model_.num_heads / model_.num_kv_heads;
  std::vector<int64_t> kv_head(static_cast<size_t>(heads_));
  for (int64_t hh = 0; hh < heads_; ++hh) kv_head[hh] = (head_begin_ + hh) / group - kv_begin_;
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  std::vector<PartialAttention> parts(seqs.size(), PartialAttention(len, heads_, hd));
  auto query = [&](size_t si) {
    return QueryBlock{q.data() + static_cast<int64_t>(si) * len * qw,
                      len,
                      heads_,
                      hd,
                      step.positions.data(),
                      kv_head.data()};
  };
  if (step.split && step.cp->size() > 1) {
    // Ring attention: each sequence's block is [positions | K | V] of this rank's chunks.
    const int64_t n = len, per_seq = n * (1 + 2 * kw);
    std::vector<float> block(seqs.size() * static_cast<size_t>(per_seq));
    for (size_t si = 0; si < seqs.size(); ++si) {
      float* b = block.data() + si * per_seq;
      const int64_t base = seqs[si] * cache_tokens_ * kw;
      for (int64_t j = 0; j < n; ++j) b[j] = static_cast<float>((*step.cached)[seqs[si]][j]);
      std::copy_n(L.k_cache.data() + base, n * kw, b + n);
      std::copy_n(L.v_cache.data() + base, n * kw, b + n + n * kw);
    }
    std::vector<int64_t> positions(static_cast<size_t>(n));
    SW_RETURN_IF_ERROR(RingPass(*step.cp, std::move(block), [&](const std::vector<float>& got) {
      for (size_t si = 0; si < seqs.size(); ++si) {
        const float* b = got.data() + si * per_seq;
        for (int64_t j = 0; j < n; ++j) positions[j] = static_cast<int64_t>(b[j]);
        const KeyBlock keys{b + n, b + n + n * kw, kw, kw, hd, positions.data(), n};
        AccumulateAttention(query(si), keys, L.window, scale, parts[si], pool);
      }
    }));
  } else {
    for (size_t si = 0; si < seqs.size(); ++si) {
      const std::vector<int64_t>& cached = (*step.cached)[seqs[si]];
      const int64_t base = seqs[si] * cache_tokens_ * kw;
      const KeyBlock keys{L.k_cache.data() + base,
                          L.v_cache.data() + base,
                          kw,
                          kw,
                          hd,
                          cached.data(),
                          static_cast<int64_t>(cached.size())};
      AccumulateAttention(query(si), keys, L.window, scale, parts[si], pool);
      SW_RETURN_IF_ERROR(MergeAcrossRanks(*step.cp, parts[si]));
    }
  }
  std::vector<float> attn(static_cast<size_t>(rows * qw));
  for (size_t si = 0; si < seqs.size(); ++si) {
    FinishAttention(parts[si], L.sinks.empty() ? nullptr : L.sinks.data(),
                    attn.data() + static_cast<int64_t>(si) * len * qw);
  }
  kernels::MatMulT(attn.data(), L.o, out.data(), rows, bias(L.o_bias), pool);
  return Status();
}

Status RankModel::Moe(const Layer& L, const std::vector<float>& hin, std::vector<float>& out,
                      const std::vector<int>& seqs, const AttentionStep& step, const RankComms& c) {
  const int64_t h = model_.hidden_size, experts = model_.moe.num_experts;
  const int64_t k = model_.moe.experts_per_token, sequences = static_cast<int64_t>(seqs.size());
  const int64_t rows = sequences * static_cast<int64_t>(step.positions.size());
  out.assign(static_cast<size_t>(rows * h), 0.0f);
  if (L.shared) {
    std::vector<float> shared(static_cast<size_t>(rows * h), 0.0f);
    L.shared->Apply(hin.data(), shared.data(), rows, h, pool_.get());
    for (int64_t t = 0; t < rows; ++t) {
      const float g =
          L.shared_gate.empty()
              ? 1.0f
              : 1.0f /
                    (1.0f + std::exp(-kernels::Dot(hin.data() + t * h, L.shared_gate.data(), h)));
      for (int64_t d = 0; d < h; ++d) out[t * h + d] += g * shared[t * h + d];
    }
  }
  // Routing, identical on every rank.
  std::vector<float> logits(static_cast<size_t>(rows * experts));
  kernels::MatMulT(hin.data(), L.router.data(), logits.data(), rows, experts, h,
                   L.router_bias.empty() ? nullptr : L.router_bias.data());
  Routes routes = RouteTokens(model_.moe, model_.norm_topk_prob, logits.data(),
                              L.score_bias.empty() ? nullptr : L.score_bias.data(), rows);
  int64_t dropped = 0;
  if (moe_options_.capacity_factor > 0) {
    SW_ASSIGN_OR_RETURN(dropped, DropOverCapacity(routes, sequences, step,
                                                  moe_options_.capacity_factor, experts, k));
  }
  // Rows are held by every TP peer, and in decode by every CP rank: count them once.
  if (place_.tp_index == 0 && (step.split || place_.cp_index == 0)) {
    moe_counts_.routed += rows * k;
    moe_counts_.dropped += dropped;
  }
  if (layout_.ep == 1) {
    // Every expert is here, split over TP: each applies its share to all its tokens at once.
    std::vector<std::vector<ExpertRow>> by_expert(static_cast<size_t>(experts));
    for (int64_t t = 0; t < rows; ++t) {
      for (const auto& [e, weight] : routes[t]) by_expert[e].push_back({t, weight});
    }
    ApplyExperts(L, by_expert, hin.data(), out.data(), h, 0);
    return c.tp->AllReduceSum(out);
  }
  // Expert parallelism. This rank dispatches the tokens t with t % tp == tp_index (its TP peers
  // hold the same tokens); each (token, expert) goes to one replica of the expert, the one this
  // rank has sent the fewest tokens this layer, on every expert-TP rank holding that replica.
  const int ranks = c.stage->size();
  const int64_t etp = layout_.ExpertTp(), tp = layout_.tp;
  const int64_t record = 2 + h;  // token index, slot, hidden
  std::vector<std::vector<float>> send(static_cast<size_t>(ranks));
  std::vector<int64_t> sent(placement_.slot_expert.size(), 0);
  for (int64_t t = place_.tp_index; t < rows; t += tp) {
    for (const auto& [e, weight] : routes[t]) {
      const int64_t slot = ChooseReplica(placement_, e, place_.stage_rank, sent);
      const int64_t owner = placement_.Rank(slot);
      for (int64_t j = 0; j < etp; ++j) {
        std::vector<float>& b = send[static_cast<size_t>(owner * etp + j)];
        b.push_back(static_cast<float>(t));
        b.push_back(static_cast<float>(slot));
        b.insert(b.end(), hin.data() + t * h, hin.data() + (t + 1) * h);
      }
    }
  }
  std::vector<float> flat, recv;
  std::vector<int64_t> counts, recv_counts;
  for (const auto& b : send) {
    flat.insert(flat.end(), b.begin(), b.end());
    counts.push_back(static_cast<int64_t>(b.size()));
  }
  SW_RETURN_IF_ERROR(c.stage->AllToAllV(flat, counts, recv, recv_counts));
  // Apply this rank's share of each requested expert to all its records at once and send the
  // results back.
  std::vector<float> reply(recv.size(), 0.0f);
  std::vector<std::vector<ExpertRow>> by_slot(L.experts.size());
  for (size_t off = 0; off < recv.size(); off += static_cast<size_t>(record)) {
    const int64_t slot = static_cast<int64_t>(recv[off + 1]);
    reply[off] = recv[off];
    reply[off + 1] = recv[off + 1];
    by_slot[slot - ep_index_ * placement_.slots_per_rank].push_back(
        {static_cast<int64_t>(off) / record, 1.0f});
  }
  ApplyExperts(L, by_slot, recv.data(), reply.data(), record, 2);
  std::vector<float> back;
  std::vector<int64_t> back_counts;
  SW_RETURN_IF_ERROR(c.stage->AllToAllV(reply, recv_counts, back, back_counts));
  for (size_t off = 0; off < back.size(); off += static_cast<size_t>(record)) {
    const int64_t t = static_cast<int64_t>(back[off]);
    const int64_t e = placement_.slot_expert[static_cast<size_t>(back[off + 1])];
    float weight = 0;
    for (const auto& [re, rw] : routes[t]) {
      if (re == e) weight = rw;
    }
    for (int64_t d = 0; d < h; ++d) out[t * h + d] += weight * back[off + 2 + d];
  }
  // Each TP peer now holds its own tokens' expert outputs (and its share of the shared
  // expert): the all-reduce completes every token on every peer.
  return c.tp->AllReduceSum(out);
}

void RankModel::ApplyExperts(const Layer& L, const std::vector<std::vector<ExpertRow>>& by_slot,
                             const float* in, float* out, int64_t stride, int64_t at) const {
  const int64_t h = model_.hidden_size;
  std::vector<float> gathered, result;
  for (size_t e = 0; e < by_slot.size(); ++e) {
    const std::vector<ExpertRow>& rows = by_slot[e];
    if (rows.empty()) continue;
    const int64_t n = static_cast<int64_t>(rows.size());
    gathered.resize(static_cast<size_t>(n * h));
    result.assign(static_cast<size_t>(n * h), 0.0f);
    for (int64_t i = 0; i < n; ++i) {
      std::copy_n(in + rows[i].row * stride + at, h, gathered.data() + i * h);
    }
    L.experts[e].Apply(gathered.data(), result.data(), n, h, pool_.get());
    for (int64_t i = 0; i < n; ++i) {
      float* y = out + rows[i].row * stride + at;
      for (int64_t d = 0; d < h; ++d) y[d] += rows[i].weight * result[i * h + d];
    }
  }
}

Status RankModel::Forward(std::vector<float>& x, const std::vector<int>& seqs,
                          const std::vector<int64_t>& positions, int64_t context, bool split,
                          const RankComms& c) {
  const int64_t h = model_.hidden_size, len = static_cast<int64_t>(positions.size());
  const int64_t rows = static_cast<int64_t>(seqs.size()) * len;
  const int cp = c.cp->size();
  // Which rows this rank keeps in its KV cache: its own prefill chunks, or, for rows every CP
  // rank holds, those whose position falls to it (position mod cp), so decode spreads the new
  // tokens' keys evenly over the group.
  AttentionStep step{positions,       std::vector<int64_t>(static_cast<size_t>(len), -1),
                     &cached_,        context,
                     split && cp > 1, c.cp};
  const size_t count = cached_[seqs.front()].size();
  if (step.split && count > 0) {
    return Error("context parallelism splits a prefill only from the first token");
  }
  int64_t slot = static_cast<int64_t>(count);
  for (int64_t t = 0; t < len; ++t) {
    if (step.split || positions[t] % cp == c.cp->rank()) step.store_slot[t] = slot++;
  }
  if (slot > cache_tokens_) {
    return Error(
        fmt::format("the KV cache holds {} tokens per sequence on this rank; the run "
                    "needs {}",
                    cache_tokens_, slot));
  }
  for (int s : seqs) {
    for (int64_t t = 0; t < len; ++t) {
      if (step.store_slot[t] >= 0) cached_[s].push_back(positions[t]);
    }
  }
  std::vector<float> normed(static_cast<size_t>(rows * h)), y;
  for (Layer& L : layers_) {
    kernels::RmsNorm(x.data(), L.input_norm.data(), normed.data(), rows, h, model_.rms_norm_eps);
    SW_RETURN_IF_ERROR(Attention(L, normed, y, seqs, step));
    SW_RETURN_IF_ERROR(c.tp->AllReduceSum(y));
    for (size_t i = 0; i < x.size(); ++i) x[i] += y[i];
    kernels::RmsNorm(x.data(), L.post_norm.data(), normed.data(), rows, h, model_.rms_norm_eps);
    if (L.mlp) {
      y.assign(static_cast<size_t>(rows * h), 0.0f);
      L.mlp->Apply(normed.data(), y.data(), rows, h, pool_.get());
      SW_RETURN_IF_ERROR(c.tp->AllReduceSum(y));
    } else {
      SW_RETURN_IF_ERROR(Moe(L, normed, y, seqs, step, c));
    }
    for (size_t i = 0; i < x.size(); ++i) x[i] += y[i];
  }
  return Status();
}

Status RankModel::Logits(const std::vector<float>& x, int64_t seqs, int64_t len,
                         std::vector<float>& out, Communicator& tp) const {
  const int64_t h = model_.hidden_size, vocab = model_.vocab_size, part = lm_head_rows_;
  std::vector<float> last(static_cast<size_t>(seqs * h));
  for (int64_t s = 0; s < seqs; ++s) {
    kernels::RmsNorm(x.data() + ((s + 1) * len - 1) * h, final_norm_.data(), last.data() + s * h, 1,
                     h, model_.rms_norm_eps);
  }
  // This rank's vocabulary rows, then every rank's gathered: [tp][seqs][part].
  std::vector<float> mine(static_cast<size_t>(seqs * part));
  kernels::MatMulT(last.data(), lm_head_, mine.data(), seqs, nullptr, pool_.get());
  return GatherVocabShares(mine, seqs, part, vocab, tp, out);
}

Status GatherVocabShares(const std::vector<float>& mine, int64_t seqs, int64_t part, int64_t vocab,
                         Communicator& tp, std::vector<float>& out) {
  std::vector<float> all(mine.size() * static_cast<size_t>(tp.size()));
  SW_RETURN_IF_ERROR(tp.AllGather(mine, all));
  out.assign(static_cast<size_t>(seqs * vocab), 0.0f);
  for (int r = 0; r < tp.size(); ++r) {
    const int64_t begin = r * part, n = std::max<int64_t>(0, std::min(part, vocab - begin));
    for (int64_t s = 0; s < seqs; ++s) {
      std::copy_n(all.data() + (r * seqs + s) * part, n, out.data() + s * vocab + begin);
    }
  }
  return Status();
}

}  // namespace shardwise
