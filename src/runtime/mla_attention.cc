#include "shardwise/runtime/mla_attention.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "shardwise/runtime/kernels.h"
#include "shardwise/runtime/rope.h"

namespace shardwise {

StatusOr<MlaAttention> MlaAttention::Load(const ModelSpec& m, int64_t layer, int64_t head_begin,
                                          int64_t heads, WeightSource& w, int64_t sequences,
                                          int64_t max_tokens) {
  MlaAttention a;
  a.model_ = m;
  a.mla_ = *m.mla;
  a.heads_ = heads;
  a.max_tokens_ = max_tokens;
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
  a.latent_cache_.assign(static_cast<size_t>(sequences * max_tokens * r), 0.0f);
  a.rope_cache_.assign(static_cast<size_t>(sequences * max_tokens * s.qk_rope_head_dim), 0.0f);
  return a;
}

void MlaAttention::Forward(const float* h, float* out, const std::vector<int>& seqs, int64_t pos,
                           int64_t len) {
  const MlaSpec& s = mla_;
  const int64_t hidden = model_.hidden_size, nope = s.qk_nope_head_dim, rd = s.qk_rope_head_dim;
  const int64_t qk = nope + rd, r = s.kv_lora_rank, rows = static_cast<int64_t>(seqs.size()) * len;
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
  std::vector<float> kv(static_cast<size_t>(rows * (r + rd)));
  kernels::MatMulT(h, kv_a_.data(), kv.data(), rows, r + rd, hidden);
  const RopeFrequencies rope = ComputeRopeFrequencies(model_, rd, pos + len);
  for (size_t si = 0; si < seqs.size(); ++si) {
    for (int64_t t = 0; t < len; ++t) {
      const int64_t row = static_cast<int64_t>(si) * len + t, p = pos + t;
      const int64_t slot = seqs[si] * max_tokens_ + p;
      kernels::RmsNorm(kv.data() + row * (r + rd), kv_a_norm_.data(),
                       latent_cache_.data() + slot * r, 1, r, model_.rms_norm_eps);
      float* pe = rope_cache_.data() + slot * rd;
      std::copy_n(kv.data() + row * (r + rd) + r, rd, pe);
      kernels::Rope(pe, 1, rd, rd, p, rope.inv_freq.data(), rope.attention_factor, true);
      kernels::Rope(q.data() + row * heads_ * qk + nope, heads_, qk, rd, p, rope.inv_freq.data(),
                    rope.attention_factor, true);
    }
  }
  std::vector<float> attn(static_cast<size_t>(rows * heads_ * s.v_head_dim), 0.0f);
  for (size_t si = 0; si < seqs.size(); ++si) {
    const int64_t row = static_cast<int64_t>(si) * len;
    if (len == 1) {
      Absorbed(q.data() + row * heads_ * qk, attn.data() + row * heads_ * s.v_head_dim, seqs[si],
               pos);
    } else {
      Expanded(q.data() + row * heads_ * qk, attn.data() + row * heads_ * s.v_head_dim, seqs[si],
               pos, len);
    }
  }
  kernels::MatMulT(attn.data(), o_.data(), out, rows, hidden, heads_ * s.v_head_dim);
}

void MlaAttention::Expanded(const float* q, float* attn, int seq, int64_t pos, int64_t len) const {
  const MlaSpec& s = mla_;
  const int64_t nope = s.qk_nope_head_dim, rd = s.qk_rope_head_dim, qk = nope + rd;
  const int64_t vd = s.v_head_dim, kvb = nope + vd, r = s.kv_lora_rank, ctx = pos + len;
  // Every cached token's per-head keys (nope part) and values: [ctx x heads x (nope + v)].
  std::vector<float> kv(static_cast<size_t>(ctx * heads_ * kvb));
  const float* latent = latent_cache_.data() + seq * max_tokens_ * r;
  const float* pe = rope_cache_.data() + seq * max_tokens_ * rd;
  kernels::MatMulT(latent, kv_b_.data(), kv.data(), ctx, heads_ * kvb, r);
  std::vector<float> scores;
  for (int64_t t = 0; t < len; ++t) {
    const int64_t p = pos + t;
    scores.resize(static_cast<size_t>(p + 1));
    for (int64_t hh = 0; hh < heads_; ++hh) {
      const float* qh = q + (t * heads_ + hh) * qk;
      for (int64_t j = 0; j <= p; ++j) {
        const float* kj = kv.data() + (j * heads_ + hh) * kvb;
        scores[j] = (kernels::Dot(qh, kj, nope) + kernels::Dot(qh + nope, pe + j * rd, rd)) *
                    softmax_scale_;
      }
      kernels::Softmax(scores.data(), p + 1);
      float* o = attn + (t * heads_ + hh) * vd;
      for (int64_t j = 0; j <= p; ++j) {
        const float* vj = kv.data() + (j * heads_ + hh) * kvb + nope;
        for (int64_t d = 0; d < vd; ++d) o[d] += scores[j] * vj[d];
      }
    }
  }
}

void MlaAttention::Absorbed(const float* q, float* attn, int seq, int64_t position) const {
  const MlaSpec& s = mla_;
  const int64_t nope = s.qk_nope_head_dim, rd = s.qk_rope_head_dim, qk = nope + rd;
  const int64_t vd = s.v_head_dim, kvb = nope + vd, r = s.kv_lora_rank;
  const float* latent = latent_cache_.data() + seq * max_tokens_ * r;
  const float* pe = rope_cache_.data() + seq * max_tokens_ * rd;
  std::vector<float> q_latent(static_cast<size_t>(r)), o_latent(static_cast<size_t>(r));
  std::vector<float> scores(static_cast<size_t>(position + 1));
  for (int64_t hh = 0; hh < heads_; ++hh) {
    const float* qh = q + hh * qk;
    const float* w = kv_b_.data() + hh * kvb * r;  // rows: nope key rows, then v rows
    // q_latent = W_UK^T q_nope: the key up-projection folded into the query.
    std::fill(q_latent.begin(), q_latent.end(), 0.0f);
    for (int64_t d = 0; d < nope; ++d) {
      for (int64_t c = 0; c < r; ++c) q_latent[c] += qh[d] * w[d * r + c];
    }
    for (int64_t j = 0; j <= position; ++j) {
      scores[j] = (kernels::Dot(q_latent.data(), latent + j * r, r) +
                   kernels::Dot(qh + nope, pe + j * rd, rd)) *
                  softmax_scale_;
    }
    kernels::Softmax(scores.data(), position + 1);
    std::fill(o_latent.begin(), o_latent.end(), 0.0f);
    for (int64_t j = 0; j <= position; ++j) {
      for (int64_t c = 0; c < r; ++c) o_latent[c] += scores[j] * latent[j * r + c];
    }
    // The value up-projection W_UV applied once to the attention-weighted latent.
    for (int64_t d = 0; d < vd; ++d)
      attn[hh * vd + d] = kernels::Dot(w + (nope + d) * r, o_latent.data(), r);
  }
}

}  // namespace shardwise
