// The attention of a layer, GQA or MLA, for every CP case: a split prefill passes key blocks
// round the CP ring (partial_attention.h's RingPass), decode under CP merges each rank's partial
// result over its shard of the cache, and without CP the keys are all local.
#include <cmath>
#include <functional>

#include "shardwise/runtime/partial_attention.h"
#include "stage_state.h"

namespace shardwise {
namespace {

// A cache (or its K and V halves) as the ring carries it: `width` elements per slot.
struct RingPart {
  const Tensor* cache = nullptr;
  int64_t width = 0;
  Scratch imported;  // where a received block's part goes
};

// One rank's blocks round the CP ring: per sequence [positions (n) | each part's n slots].
// `attend` runs on every block, this rank's first, with the blocks' positions and the tensors
// the parts were imported into ([sequences x n x width] each).
Status RingAttend(
    StageState& s, Communicator& cp, const std::vector<RingPart>& parts,
    const std::function<Status(std::span<const int64_t>, const std::vector<Tensor*>&)>& attend) {
  const StepRows& step = s.step;
  const int64_t n = static_cast<int64_t>(step.key_positions.size());
  const int64_t sequences = static_cast<int64_t>(step.seqs.size());
  int64_t per_seq = n;
  for (const RingPart& p : parts) per_seq += n * p.width;
  std::vector<float> block(static_cast<size_t>(sequences * per_seq));
  std::vector<Tensor*> imported;
  for (const RingPart& p : parts) {
    SW_ASSIGN_OR_RETURN(Tensor * t, s.Get(p.imported, TensorKind::kCache, sequences * n, p.width));
    imported.push_back(t);
  }
  for (int64_t si = 0; si < sequences; ++si) {
    float* b = block.data() + si * per_seq;
    for (int64_t j = 0; j < n; ++j) b[j] = static_cast<float>(step.key_positions[j]);
    int64_t at = n;
    for (const RingPart& p : parts) {
      const int64_t from = static_cast<int64_t>(step.seqs[si]) * s.cache_tokens * p.width;
      SW_RETURN_IF_ERROR(
          s.k().Download(*p.cache, {b + at, static_cast<size_t>(n * p.width)}, from));
      at += n * p.width;
    }
  }
  std::vector<int64_t> positions(static_cast<size_t>(n));
  Status failed;
  SW_RETURN_IF_ERROR(RingPass(cp, std::move(block), [&](const std::vector<float>& got) {
    if (!failed.ok()) return;
    for (int64_t j = 0; j < n; ++j) positions[j] = static_cast<int64_t>(got[j]);
    for (int64_t si = 0; si < sequences && failed.ok(); ++si) {
      const float* b = got.data() + si * per_seq;
      int64_t at = n;
      for (size_t i = 0; i < parts.size() && failed.ok(); ++i) {
        const int64_t w = n * parts[i].width;
        failed = s.k().Upload({b + at, static_cast<size_t>(w)}, *imported[i], si * w);
        at += w;
      }
    }
    if (failed.ok()) failed = attend(positions, imported);
  }));
  return failed;
}

// Merges every CP rank's partial result over its own keys into `partial`.
Status MergePartial(StageState& s, Communicator& cp, Tensor& partial, int64_t heads,
                    int64_t value_dim) {
  if (cp.size() == 1) return Status();
  const int64_t rows = s.step.rows(), n = PartialFloats(rows, heads, value_dim);
  SW_ASSIGN_OR_RETURN(float* host, HostView(s, partial, n, s.staging));
  SW_RETURN_IF_ERROR(MergeAcrossRanks(cp, {host, static_cast<size_t>(n)}, rows, heads, value_dim));
  return CommitView(s, partial, host, n);
}

// The attention of local keys (all the keys there are without CP; this rank's shard of them in
// decode under CP, merged over the group) into out.
Status AttendLocal(StageState& s, Communicator& cp, const AttentionQueries& q,
                   const AttentionKeys& keys, Tensor& partial, const Tensor* sinks, Tensor& out) {
  if (cp.size() == 1) return s.k().AttendAll(q, keys, partial, sinks, out);
  SW_RETURN_IF_ERROR(s.k().Attend(q, keys, partial, /*fresh=*/true));
  SW_RETURN_IF_ERROR(MergePartial(s, cp, partial, q.heads, keys.value_dim));
  return s.k().FinishAttention(partial, sinks, q.rows, q.heads, keys.value_dim, out);
}

Status GqaAttention(StageState& s, const LayerWeights& L, const Tensor& normed, Tensor& attn,
                    const RankComms& c) {
  const ModelSpec& m = s.model;
  const GqaWeights& g = *L.gqa;
  const HeadShard& hs = s.shard.heads;
  const GqaShape shape{hs.heads.size(), hs.kv_heads.size(), m.head_dim,
                       hs.heads.begin,  hs.kv_heads.begin,  m.num_heads / m.num_kv_heads};
  const int64_t rows = s.step.rows(), hd = m.head_dim;
  const int64_t qw = shape.heads * hd, kw = shape.kv_heads * hd;
  SW_ASSIGN_OR_RETURN(Tensor * qkv, s.Get(Scratch::kQkv, TensorKind::kFloat, rows, qw + 2 * kw));
  SW_ASSIGN_OR_RETURN(Tensor * q, s.Get(Scratch::kQ, TensorKind::kFloat, rows, qw));
  SW_ASSIGN_OR_RETURN(Tensor * partial, s.Get(Scratch::kPartial, TensorKind::kFloat,
                                              PartialFloats(rows, shape.heads, hd), 1));
  SW_RETURN_IF_ERROR(s.k().Gemm(normed, *g.qkv, g.qkv_bias.get(), *qkv, rows));
  SW_RETURN_IF_ERROR(s.k().PrepareGqa(*qkv, shape, g.q_norm.get(), g.k_norm.get(), m.rms_norm_eps,
                                      *q, *g.k_cache, *g.v_cache, s.cache_tokens));
  std::vector<int64_t>& kv_head = s.gqa_kv_head;
  kv_head.resize(static_cast<size_t>(shape.heads));
  for (int64_t h = 0; h < shape.heads; ++h) kv_head[h] = hs.LocalKvHead(h, shape.group);
  const AttentionQueries queries{q, rows, shape.heads, hd, kv_head};
  AttentionKeys keys{g.k_cache.get(),
                     g.v_cache.get(),
                     true,
                     s.cache_tokens,
                     kw,
                     kw,
                     hd,
                     {},
                     L.window,
                     1.0f / std::sqrt(static_cast<float>(hd))};
  if (!s.split) return AttendLocal(s, *c.cp, queries, keys, *partial, L.sinks.get(), attn);
  bool fresh = true;
  SW_RETURN_IF_ERROR(RingAttend(
      s, *c.cp,
      {{g.k_cache.get(), kw, Scratch::kRingKeys}, {g.v_cache.get(), kw, Scratch::kRingValues}},
      [&](std::span<const int64_t> positions, const std::vector<Tensor*>& kv) {
        AttentionKeys block = keys;
        block.keys = kv[0];
        block.values = kv[1];
        block.by_sequence = false;
        block.capacity = static_cast<int64_t>(positions.size());
        block.positions = positions;
        const Status st = s.k().Attend(queries, block, *partial, fresh);
        fresh = false;
        return st;
      }));
  return s.k().FinishAttention(*partial, L.sinks.get(), rows, shape.heads, hd, attn);
}

// Softmax temperature of MLA: 1/sqrt(qk), times YaRN's mscale(factor, mscale_all_dim)^2 when
// the checkpoint sets mscale_all_dim (DeepSeek-V2/V3's attention scaling under YaRN).
float MlaScale(const ModelSpec& m) {
  const MlaSpec& a = *m.mla;
  double scale = 1.0 / std::sqrt(static_cast<double>(a.qk_nope_head_dim + a.qk_rope_head_dim));
  if (m.rope_scaling.mscale_all_dim > 0) {
    const double mscale = YarnMscale(m.rope_scaling.factor, m.rope_scaling.mscale_all_dim);
    scale *= mscale * mscale;
  }
  return static_cast<float>(scale);
}

// Absorbed MLA (single-token steps): queries folded into the latent space, one key per token
// shared by every head, the output lifted back through W_UV.
Status MlaAbsorbed(StageState& s, const MlaWeights& a, const MlaShape& shape, const Tensor& q,
                   Tensor& attn, Communicator& cp) {
  const int64_t rows = s.step.rows(), w = shape.latent(), r = shape.kv_lora;
  SW_ASSIGN_OR_RETURN(Tensor * qa,
                      s.Get(Scratch::kQAbsorbed, TensorKind::kFloat, rows, shape.heads * w));
  SW_ASSIGN_OR_RETURN(Tensor * partial, s.Get(Scratch::kPartial, TensorKind::kFloat,
                                              PartialFloats(rows, shape.heads, r), 1));
  SW_ASSIGN_OR_RETURN(Tensor * latent,
                      s.Get(Scratch::kLatentOut, TensorKind::kFloat, rows, shape.heads * r));
  SW_RETURN_IF_ERROR(s.k().MlaAbsorbQuery(q, *a.kv_b, shape, *qa, rows));
  const AttentionQueries queries{qa, rows, shape.heads, w, {}};
  const AttentionKeys keys{a.cache.get(),    a.cache.get(), true, s.cache_tokens, w, w, r, {}, 0,
                           MlaScale(s.model)};
  SW_RETURN_IF_ERROR(AttendLocal(s, cp, queries, keys, *partial, nullptr, *latent));
  return s.k().MlaLiftOutput(*latent, *a.kv_b, shape, attn, rows);
}

// Expanded MLA (prefill): every cached latent expanded into per-head keys and values.
Status MlaExpanded(StageState& s, const MlaWeights& a, const MlaShape& shape, const Tensor& q,
                   Tensor& attn, Communicator& cp) {
  const int64_t rows = s.step.rows(), qk = shape.qk(), vd = shape.value_dim;
  const int64_t sequences = static_cast<int64_t>(s.step.seqs.size());
  SW_ASSIGN_OR_RETURN(Tensor * partial, s.Get(Scratch::kPartial, TensorKind::kFloat,
                                              PartialFloats(rows, shape.heads, vd), 1));
  std::vector<int64_t>& own = s.mla_heads;
  own.resize(static_cast<size_t>(shape.heads));
  for (int64_t h = 0; h < shape.heads; ++h) own[h] = h;
  const AttentionQueries queries{&q, rows, shape.heads, qk, own};
  // Expands n latents of each sequence's block of `source` and attends them.
  auto expand_and_attend = [&](const Tensor& source, bool by_sequence, int64_t capacity,
                               std::span<const int64_t> positions, bool fresh) -> Status {
    const int64_t n = static_cast<int64_t>(positions.size());
    SW_ASSIGN_OR_RETURN(
        Tensor * k, s.Get(Scratch::kMlaKeys, TensorKind::kCache, sequences * n, shape.heads * qk));
    SW_ASSIGN_OR_RETURN(Tensor * v, s.Get(Scratch::kMlaValues, TensorKind::kCache, sequences * n,
                                          shape.heads * vd));
    SW_RETURN_IF_ERROR(
        s.k().MlaExpand(source, by_sequence, capacity, sequences, n, *a.kv_b, shape, *k, *v));
    const AttentionKeys keys{
        k, v, false, n, shape.heads * qk, shape.heads * vd, vd, positions, 0, MlaScale(s.model)};
    return s.k().Attend(queries, keys, *partial, fresh);
  };
  if (s.split) {
    bool fresh = true;
    SW_RETURN_IF_ERROR(
        RingAttend(s, cp, {{a.cache.get(), shape.latent(), Scratch::kRingKeys}},
                   [&](std::span<const int64_t> positions, const std::vector<Tensor*>& got) {
                     const Status st = expand_and_attend(
                         *got[0], false, static_cast<int64_t>(positions.size()), positions, fresh);
                     fresh = false;
                     return st;
                   }));
  } else {
    SW_RETURN_IF_ERROR(expand_and_attend(*a.cache, true, s.cache_tokens, s.step.key_positions,
                                         /*fresh=*/true));
    SW_RETURN_IF_ERROR(MergePartial(s, cp, *partial, shape.heads, vd));
  }
  return s.k().FinishAttention(*partial, nullptr, rows, shape.heads, vd, attn);
}

Status MlaAttention(StageState& s, const MlaWeights& a, const Tensor& normed, Tensor& attn,
                    const RankComms& c) {
  const MlaSpec& spec = *s.model.mla;
  const MlaShape shape{s.shard.heads.heads.size(), spec.qk_nope_head_dim, spec.qk_rope_head_dim,
                       spec.kv_lora_rank, spec.v_head_dim};
  const int64_t rows = s.step.rows();
  const double eps = s.model.rms_norm_eps;
  SW_ASSIGN_OR_RETURN(Tensor * q,
                      s.Get(Scratch::kQ, TensorKind::kFloat, rows, shape.heads * shape.qk()));
  if (a.q_a) {
    const int64_t ql = spec.q_lora_rank;
    SW_ASSIGN_OR_RETURN(Tensor * lora, s.Get(Scratch::kQLora, TensorKind::kFloat, rows, ql));
    SW_ASSIGN_OR_RETURN(Tensor * normed_lora,
                        s.Get(Scratch::kQLoraNormed, TensorKind::kGemmInput, rows, ql));
    SW_RETURN_IF_ERROR(s.k().Gemm(normed, *a.q_a, nullptr, *lora, rows));
    SW_RETURN_IF_ERROR(s.k().RmsNorm(*lora, *a.q_a_norm, *normed_lora, rows, eps));
    SW_RETURN_IF_ERROR(s.k().Gemm(*normed_lora, *a.q_b, nullptr, *q, rows));
  } else {
    SW_RETURN_IF_ERROR(s.k().Gemm(normed, *a.q_b, nullptr, *q, rows));
  }
  SW_ASSIGN_OR_RETURN(Tensor * kv, s.Get(Scratch::kKv, TensorKind::kFloat, rows, shape.latent()));
  SW_RETURN_IF_ERROR(s.k().Gemm(normed, *a.kv_a, nullptr, *kv, rows));
  SW_RETURN_IF_ERROR(s.k().PrepareMla(*q, *kv, *a.kv_a_norm, eps, shape, *a.cache, s.cache_tokens));
  if (s.step.positions.size() == 1 && !s.split) {
    return MlaAbsorbed(s, a, shape, *q, attn, *c.cp);
  }
  return MlaExpanded(s, a, shape, *q, attn, *c.cp);
}

}  // namespace

Status AttentionBlock(StageState& s, const LayerWeights& L, const Tensor& normed, Tensor& y,
                      const RankComms& c) {
  const ModelSpec& m = s.model;
  const int64_t rows = s.step.rows(), h = m.hidden_size;
  const int64_t width = m.mla ? s.shard.heads.heads.size() * m.mla->v_head_dim
                              : s.shard.heads.heads.size() * m.head_dim;
  SW_ASSIGN_OR_RETURN(Tensor * attn, s.Get(Scratch::kAttn, TensorKind::kGemmInput, rows, width));
  if (L.mla) {
    SW_RETURN_IF_ERROR(MlaAttention(s, *L.mla, normed, *attn, c));
    SW_RETURN_IF_ERROR(s.k().Gemm(*attn, *L.mla->o, nullptr, y, rows));
  } else {
    SW_RETURN_IF_ERROR(GqaAttention(s, L, normed, *attn, c));
    SW_RETURN_IF_ERROR(s.k().Gemm(*attn, *L.gqa->o, L.gqa->o_bias.get(), y, rows));
  }
  return AllReduce(s, *c.tp, y, rows * h);
}

}  // namespace shardwise
