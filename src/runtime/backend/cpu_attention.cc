// The CPU backend's attention ops: GQA and MLA before attention (norms, RoPE, KV-cache writes),
// MLA's absorbed and expanded forms, and blockwise attention with partial results
// (partial_attention.h), heads split over the rank's threads.
#include <algorithm>

#include "cpu_kernels.h"
#include "shardwise/runtime/kernels.h"
#include "shardwise/runtime/partial_attention.h"

namespace shardwise {

Status CpuKernels::PrepareGqa(const Tensor& qkv, const GqaShape& g, const Tensor* q_norm,
                              const Tensor* k_norm, double eps, Tensor& q_out, Tensor& k_cache,
                              Tensor& v_cache, int64_t capacity) {
  const int64_t hd = g.head_dim, qw = g.heads * hd, kw = g.kv_heads * hd, width = qw + 2 * kw;
  const int64_t len = static_cast<int64_t>(step_.positions.size());
  const double* inv_freq = step_.rope.inv_freq.data();
  const double factor = step_.rope.attention_factor;
  const float* in = Data(qkv).data();
  float* kc = Data(k_cache).data();
  float* vc = Data(v_cache).data();
  for (size_t si = 0; si < step_.seqs.size(); ++si) {
    for (int64_t t = 0; t < len; ++t) {
      const int64_t row = static_cast<int64_t>(si) * len + t, p = step_.positions[t];
      const float* src = in + row * width;
      float* q = Data(q_out).data() + row * qw;
      std::copy_n(src, qw, q);
      if (q_norm) kernels::RmsNorm(q, Data(*q_norm).data(), q, g.heads, hd, eps);
      kernels::Rope(q, g.heads, hd, hd, p, inv_freq, factor, false);
      const int64_t slot = step_.store_slots[t];
      if (slot < 0) continue;
      const int64_t at = (step_.seqs[si] * capacity + slot) * kw;
      std::copy_n(src + qw, kw, kc + at);
      if (k_norm) kernels::RmsNorm(kc + at, Data(*k_norm).data(), kc + at, g.kv_heads, hd, eps);
      kernels::Rope(kc + at, g.kv_heads, hd, hd, p, inv_freq, factor, false);
      std::copy_n(src + qw + kw, kw, vc + at);
    }
  }
  return Status();
}

Status CpuKernels::PrepareMla(Tensor& q, const Tensor& kv, const Tensor& kv_norm, double eps,
                              const MlaShape& s, Tensor& cache, int64_t capacity) {
  const int64_t len = static_cast<int64_t>(step_.positions.size()), w = s.latent();
  const double* inv_freq = step_.rope.inv_freq.data();
  const double factor = step_.rope.attention_factor;
  for (size_t si = 0; si < step_.seqs.size(); ++si) {
    for (int64_t t = 0; t < len; ++t) {
      const int64_t row = static_cast<int64_t>(si) * len + t, p = step_.positions[t];
      kernels::Rope(Data(q).data() + row * s.heads * s.qk() + s.nope, s.heads, s.qk(), s.rope, p,
                    inv_freq, factor, true);
      if (step_.store_slots[t] < 0) continue;
      float* entry = Data(cache).data() + (step_.seqs[si] * capacity + step_.store_slots[t]) * w;
      const float* src = Data(kv).data() + row * w;
      kernels::RmsNorm(src, Data(kv_norm).data(), entry, 1, s.kv_lora, eps);
      std::copy_n(src + s.kv_lora, s.rope, entry + s.kv_lora);
      kernels::Rope(entry + s.kv_lora, 1, s.rope, s.rope, p, inv_freq, factor, true);
    }
  }
  return Status();
}

Status CpuKernels::MlaAbsorbQuery(const Tensor& q, const Tensor& kv_b, const MlaShape& s,
                                  Tensor& qa, int64_t rows) {
  const int64_t r = s.kv_lora, w = s.latent(), qk = s.qk();
  const float* wkv = Matrix(kv_b).f32();
  float* out = Data(qa).data();
  std::fill_n(out, rows * s.heads * w, 0.0f);
  for (int64_t row = 0; row < rows; ++row) {
    for (int64_t hh = 0; hh < s.heads; ++hh) {
      const float* qh = Data(q).data() + (row * s.heads + hh) * qk;
      const float* wk = wkv + hh * (s.nope + s.value_dim) * r;  // rows: nope keys, then values
      float* ql = out + (row * s.heads + hh) * w;
      for (int64_t d = 0; d < s.nope; ++d) {
        for (int64_t c = 0; c < r; ++c) ql[c] += qh[d] * wk[d * r + c];
      }
      std::copy_n(qh + s.nope, s.rope, ql + r);
    }
  }
  return Status();
}

Status CpuKernels::MlaLiftOutput(const Tensor& o_latent, const Tensor& kv_b, const MlaShape& s,
                                 Tensor& out, int64_t rows) {
  const int64_t r = s.kv_lora, vd = s.value_dim;
  const float* wkv = Matrix(kv_b).f32();
  for (int64_t row = 0; row < rows; ++row) {
    for (int64_t hh = 0; hh < s.heads; ++hh) {
      const float* wv = wkv + (hh * (s.nope + vd) + s.nope) * r;
      const float* o = Data(o_latent).data() + (row * s.heads + hh) * r;
      for (int64_t d = 0; d < vd; ++d) {
        Data(out)[(row * s.heads + hh) * vd + d] = kernels::Dot(wv + d * r, o, r);
      }
    }
  }
  return Status();
}

Status CpuKernels::MlaExpand(const Tensor& source, bool by_sequence, int64_t capacity,
                             int64_t sequences, int64_t n, const Tensor& kv_b, const MlaShape& s,
                             Tensor& keys, Tensor& values) {
  const int64_t r = s.kv_lora, w = s.latent(), qk = s.qk(), vd = s.value_dim;
  const int64_t kvb = s.nope + vd;
  std::vector<float> latent(static_cast<size_t>(n * r)), kv(static_cast<size_t>(n * s.heads * kvb));
  for (int64_t b = 0; b < sequences; ++b) {
    const int64_t block = by_sequence ? step_.seqs[static_cast<size_t>(b)] : b;
    const float* cache = Data(source).data() + block * capacity * w;
    for (int64_t j = 0; j < n; ++j) std::copy_n(cache + j * w, r, latent.data() + j * r);
    kernels::MatMulT(latent.data(), Matrix(kv_b), kv.data(), n, nullptr, &pool_);
    float* k = Data(keys).data() + b * n * s.heads * qk;
    float* v = Data(values).data() + b * n * s.heads * vd;
    for (int64_t j = 0; j < n; ++j) {
      for (int64_t hh = 0; hh < s.heads; ++hh) {
        const float* e = kv.data() + (j * s.heads + hh) * kvb;
        std::copy_n(e, s.nope, k + (j * s.heads + hh) * qk);
        std::copy_n(cache + j * w + r, s.rope, k + (j * s.heads + hh) * qk + s.nope);
        std::copy_n(e + s.nope, vd, v + (j * s.heads + hh) * vd);
      }
    }
  }
  return Status();
}

Status CpuKernels::Attend(const AttentionQueries& q, const AttentionKeys& keys, Tensor& partial,
                          bool fresh) {
  const int64_t len = static_cast<int64_t>(step_.positions.size()), rows = step_.rows();
  const std::vector<int64_t> shared(q.kv_head.empty() ? static_cast<size_t>(q.heads) : 0, 0);
  const int64_t* kv_head = q.kv_head.empty() ? shared.data() : q.kv_head.data();
  const std::span<const int64_t> positions =
      keys.positions.empty() ? std::span<const int64_t>(step_.key_positions) : keys.positions;
  const PartialView all = PartialOf(Data(partial).data(), rows, q.heads, keys.value_dim);
  for (size_t si = 0; si < step_.seqs.size(); ++si) {
    const int64_t b = keys.by_sequence ? step_.seqs[si] : static_cast<int64_t>(si);
    const QueryBlock queries{Data(*q.q).data() + static_cast<int64_t>(si) * len * q.heads * q.dim,
                             len,
                             q.heads,
                             q.dim,
                             step_.positions.data(),
                             kv_head};
    const KeyBlock block{Data(*keys.keys).data() + b * keys.capacity * keys.key_stride,
                         Data(*keys.values).data() + b * keys.capacity * keys.value_stride,
                         keys.key_stride,
                         keys.value_stride,
                         keys.value_dim,
                         positions.data(),
                         static_cast<int64_t>(positions.size())};
    const PartialView state = all.Rows(static_cast<int64_t>(si) * len, len);
    if (fresh) state.Reset();
    AccumulateAttention(queries, block, keys.window, keys.scale, state, &pool_);
  }
  return Status();
}

Status CpuKernels::FinishAttention(const Tensor& partial, const Tensor* sinks, int64_t rows,
                                   int64_t heads, int64_t value_dim, Tensor& out) {
  shardwise::FinishAttention(
      PartialOf(const_cast<float*>(Data(partial).data()), rows, heads, value_dim),
      sinks ? Data(*sinks).data() : nullptr, Data(out).data());
  return Status();
}

}  // namespace shardwise
