#include "shardwise/runtime/mla_attention.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "shardwise/runtime/kernels.h"
#include "shardwise/runtime/rope.h"

namespace shardwise {

StatusOr<MlaAttention> MlaAttention::Load(const ModelSpec& m, int64_t layer, int64_t head_begin,
                                          int64_t heads, WeightSource& w, int64_t sequences,
                                          int64_t cache_tokens) {
  MlaAttention a;
  a.model_ = m;
  a.mla_ = *m.mla;
  a.heads_ = heads;
  a.cache_tokens_ = cache_tokens;
  const MlaSpec& s = a.mla_;
  const int64_t h = m.hidden_size, qk = s.qk_nope_head_dim + s.qk_rope_head_dim;
  const int64_t kvb = s.qk_nope_head_dim + s.v_head_dim, r = s.kv_lora_rank;
  // Softmax temperature: 1/sqrt(qk), times YaRN's mscale(factor, mscale_all_dim)^2 when the
  // checkpoint sets mscale_all_dim (DeepSeek-V2/V3's attention scaling under YaRN).
  double scale = 1.0 / std::sqrt(static_cast<double>(qk));
  if (m.rope_scaling.mscale_all_dim > 0) {
    const double mscale = YarnMscale(m.rope_scaling.factor, m.rope_scaling.mscale_all_dim);
    scale *= mscale * mscale;
  }
  a.softmax_scale_ = static_cast<float>(scale);
  auto name = [&](const std::string& rest) {
    return fmt::format("model.layers.{}.self_attn.{}", layer, rest);
  };
  const Slice all_h{0, h}, q_rows{head_begin * qk, (head_begin + heads) * qk};
  if (s.q_lora_rank > 0) {
    const int64_t ql = s.q_lora_rank;
    SW_ASSIGN_OR_RETURN(a.q_a_, w.Read(name("q_a_proj.weight"), ql, h, {0, ql}, all_h));
    SW_ASSIGN_OR_RETURN(a.q_a_norm_, w.Read(name("q_a_layernorm.weight"), 1, ql, {0, 1}, {0, ql}));
    SW_ASSIGN_OR_RETURN(a.q_b_,
                        w.Read(name("q_b_proj.weight"), m.num_heads * qk, ql, q_rows, {0, ql}));
  } else {
    SW_ASSIGN_OR_RETURN(a.q_b_, w.Read(name("q_proj.weight"), m.num_heads * qk, h, q_rows, all_h));
  }
  const int64_t kv_a_rows = r + s.qk_rope_head_dim;
  SW_ASSIGN_OR_RETURN(
      a.kv_a_, w.Read(name("kv_a_proj_with_mqa.weight"), kv_a_rows, h, {0, kv_a_rows}, all_h));
  SW_ASSIGN_OR_RETURN(a.kv_a_norm_, w.Read(name("kv_a_layernorm.weight"), 1, r, {0, 1}, {0, r}));
  SW_ASSIGN_OR_RETURN(a.kv_b_, w.Read(name("kv_b_proj.weight"), m.num_heads * kvb, r,
                                      {head_begin * kvb, (head_begin + heads) * kvb}, {0, r}));
  SW_ASSIGN_OR_RETURN(a.o_,
                      w.Read(name("o_proj.weight"), h, m.num_heads * s.v_head_dim, all_h,
                             {head_begin * s.v_head_dim, (head_begin + heads) * s.v_head_dim}));
  a.cache_.assign(static_cast<size_t>(sequences * cache_tokens * kv_a_rows), 0.0f);
  return a;
}

Status MlaAttention::Forward(const float* h, float* out, const std::vector<int>& seqs,
                             const AttentionStep& step) {
  const MlaSpec& s = mla_;
  const int64_t hidden = model_.hidden_size, nope = s.qk_nope_head_dim, rd = s.qk_rope_head_dim;
  const int64_t qk = nope + rd, r = s.kv_lora_rank, w = r + rd, vd = s.v_head_dim;
  const int64_t len = static_cast<int64_t>(step.positions.size());
  const int64_t rows = static_cast<int64_t>(seqs.size()) * len;
  std::vector<float> q(static_cast<size_t>(rows * heads_ * qk));
  if (s.q_lora_rank > 0) {
    std::vector<float> qa(static_cast<size_t>(rows * s.q_lora_rank));
    kernels::MatMulT(h, q_a_.data(), qa.data(), rows, s.q_lora_rank, hidden);
    kernels::RmsNorm(qa.data(), q_a_norm_.data(), qa.data(), rows, s.q_lora_rank,
                     model_.rms_norm_eps);
    kernels::MatMulT(qa.data(), q_b_.data(), q.data(), rows, heads_ * qk, s.q_lora_rank);
  } else {
    kernels::MatMulT(h, q_b_.data(), q.data(), rows, heads_ * qk, hidden);
  }
  std::vector<float> kv(static_cast<size_t>(rows * w));
  kernels::MatMulT(h, kv_a_.data(), kv.data(), rows, w, hidden);
  const RopeFrequencies rope = ComputeRopeFrequencies(model_, rd, step.context);
  for (size_t si = 0; si < seqs.size(); ++si) {
    for (int64_t t = 0; t < len; ++t) {
      const int64_t row = static_cast<int64_t>(si) * len + t, p = step.positions[t];
      kernels::Rope(q.data() + row * heads_ * qk + nope, heads_, qk, rd, p, rope.inv_freq.data(),
                    rope.attention_factor, true);
      if (step.store_slot[t] < 0) continue;
      float* entry = cache_.data() + (seqs[si] * cache_tokens_ + step.store_slot[t]) * w;
      kernels::RmsNorm(kv.data() + row * w, kv_a_norm_.data(), entry, 1, r, model_.rms_norm_eps);
      std::copy_n(kv.data() + row * w + r, rd, entry + r);
      kernels::Rope(entry + r, 1, rd, rd, p, rope.inv_freq.data(), rope.attention_factor, true);
    }
  }
  std::vector<float> attn(static_cast<size_t>(rows * heads_ * vd), 0.0f);
  const float* cache = cache_.data();
  auto seq_cache = [&](size_t si) { return cache + seqs[si] * cache_tokens_ * w; };
  auto cached = [&](size_t si) -> const std::vector<int64_t>& { return (*step.cached)[seqs[si]]; };
  if (len == 1 && !step.split) {
    // Absorbed: q_latent = W_UK^T q_nope per head, attending over [latent | rotary key] as one
    // key shared by every head; the output stays latent until W_UV.
    const std::vector<int64_t> shared(static_cast<size_t>(heads_), 0);
    std::vector<float> qa(static_cast<size_t>(heads_ * w)),
        o_latent(static_cast<size_t>(heads_ * r));
    for (size_t si = 0; si < seqs.size(); ++si) {
      const float* qs = q.data() + static_cast<int64_t>(si) * heads_ * qk;
      std::fill(qa.begin(), qa.end(), 0.0f);
      for (int64_t hh = 0; hh < heads_; ++hh) {
        const float* qh = qs + hh * qk;
        const float* wk = kv_b_.data() + hh * (nope + vd) * r;  // rows: nope keys, then values
        float* ql = qa.data() + hh * w;
        for (int64_t d = 0; d < nope; ++d) {
          for (int64_t c = 0; c < r; ++c) ql[c] += qh[d] * wk[d * r + c];
        }
        std::copy_n(qh + nope, rd, ql + r);
      }
      PartialAttention part(1, heads_, r);
      const KeyBlock keys{seq_cache(si),
                          seq_cache(si),
                          w,
                          w,
                          r,
                          cached(si).data(),
                          static_cast<int64_t>(cached(si).size())};
      AccumulateAttention({qa.data(), 1, heads_, w, step.positions.data(), shared.data()}, keys, 0,
                          softmax_scale_, part);
      SW_RETURN_IF_ERROR(MergeAcrossRanks(*step.cp, part));
      FinishAttention(part, nullptr, o_latent.data());
      for (int64_t hh = 0; hh < heads_; ++hh) {
        const float* wv = kv_b_.data() + (hh * (nope + vd) + nope) * r;
        for (int64_t d = 0; d < vd; ++d) {
          attn[(static_cast<int64_t>(si) * heads_ + hh) * vd + d] =
              kernels::Dot(wv + d * r, o_latent.data() + hh * r, r);
        }
      }
    }
  } else {
    std::vector<PartialAttention> parts(seqs.size(), PartialAttention(len, heads_, vd));
    auto q_of = [&](size_t si) { return q.data() + static_cast<int64_t>(si) * len * heads_ * qk; };
    if (step.split && step.cp->size() > 1) {
      // Ring: each sequence's block is [positions | cache entries] of this rank's chunks.
      const int64_t n = len, per_seq = n * (1 + w);
      std::vector<float> block(seqs.size() * static_cast<size_t>(per_seq));
      for (size_t si = 0; si < seqs.size(); ++si) {
        float* b = block.data() + si * per_seq;
        for (int64_t j = 0; j < n; ++j) b[j] = static_cast<float>(cached(si)[j]);
        std::copy_n(seq_cache(si), n * w, b + n);
      }
      std::vector<int64_t> positions(static_cast<size_t>(n));
      SW_RETURN_IF_ERROR(RingPass(*step.cp, std::move(block), [&](const std::vector<float>& got) {
        for (size_t si = 0; si < seqs.size(); ++si) {
          const float* b = got.data() + si * per_seq;
          for (int64_t j = 0; j < n; ++j) positions[j] = static_cast<int64_t>(b[j]);
          AttendExpanded(q_of(si), step.positions.data(), len, b + n, positions.data(), n,
                         parts[si]);
        }
      }));
    } else {
      for (size_t si = 0; si < seqs.size(); ++si) {
        AttendExpanded(q_of(si), step.positions.data(), len, seq_cache(si), cached(si).data(),
                       static_cast<int64_t>(cached(si).size()), parts[si]);
        SW_RETURN_IF_ERROR(MergeAcrossRanks(*step.cp, parts[si]));
      }
    }
    for (size_t si = 0; si < seqs.size(); ++si) {
      FinishAttention(parts[si], nullptr,
                      attn.data() + static_cast<int64_t>(si) * len * heads_ * vd);
    }
  }
  kernels::MatMulT(attn.data(), o_.data(), out, rows, hidden, heads_ * vd);
  return Status();
}

void MlaAttention::AttendExpanded(const float* q, const int64_t* q_positions, int64_t rows,
                                  const float* cache, const int64_t* positions, int64_t n,
                                  PartialAttention& state) const {
  const MlaSpec& s = mla_;
  const int64_t nope = s.qk_nope_head_dim, rd = s.qk_rope_head_dim, qk = nope + rd;
  const int64_t vd = s.v_head_dim, kvb = nope + vd, r = s.kv_lora_rank, w = r + rd;
  // Every token's per-head keys [k_nope | rotary key] and values, expanded from its latent.
  std::vector<float> latent(static_cast<size_t>(n * r)), kv(static_cast<size_t>(n * heads_ * kvb));
  for (int64_t j = 0; j < n; ++j) std::copy_n(cache + j * w, r, latent.data() + j * r);
  kernels::MatMulT(latent.data(), kv_b_.data(), kv.data(), n, heads_ * kvb, r);
  std::vector<float> keys(static_cast<size_t>(n * heads_ * qk)),
      values(static_cast<size_t>(n * heads_ * vd));
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t hh = 0; hh < heads_; ++hh) {
      const float* e = kv.data() + (j * heads_ + hh) * kvb;
      std::copy_n(e, nope, keys.data() + (j * heads_ + hh) * qk);
      std::copy_n(cache + j * w + r, rd, keys.data() + (j * heads_ + hh) * qk + nope);
      std::copy_n(e + nope, vd, values.data() + (j * heads_ + hh) * vd);
    }
  }
  std::vector<int64_t> own(static_cast<size_t>(heads_));
  for (int64_t hh = 0; hh < heads_; ++hh) own[hh] = hh;
  AccumulateAttention({q, rows, heads_, qk, q_positions, own.data()},
                      {keys.data(), values.data(), heads_ * qk, heads_ * vd, vd, positions, n}, 0,
                      softmax_scale_, state);
}

}  // namespace shardwise
