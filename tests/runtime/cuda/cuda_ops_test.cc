// Single CUDA ops against independent CPU computations on the same (bf16- or fp8-rounded)
// inputs, as llama.cpp's test-backend-ops compares backends op by op. Skips without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "gpu_test_util.h"
#include "shardwise/runtime/cuda/gemm.h"
#include "shardwise/runtime/kernels.h"

namespace shardwise::cuda {
namespace {

// Deterministic values in [-1, 1), rounded to bf16 so host and device see the same inputs.
std::vector<float> Values(size_t n, uint32_t seed) {
  std::vector<float> v(n);
  uint32_t s = seed;
  for (float& x : v) {
    s = s * 1664525u + 1013904223u;
    x = __bfloat162float(__float2bfloat16(static_cast<float>(s >> 8) / 8388608.0f - 1.0f));
  }
  return v;
}

template <typename T>
DeviceBuffer<T> ToDevice(const std::vector<T>& host) {
  auto b = DeviceBuffer<T>::Allocate(host.size()).value();
  EXPECT_TRUE(b.CopyFromHost(std::span<const T>(host), nullptr).ok());
  return b;
}

std::vector<bf16> AsBf16(const std::vector<float>& v) {
  std::vector<bf16> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[i] = __float2bfloat16(v[i]);
  return out;
}

template <typename T>
std::vector<T> ToHost(const DeviceBuffer<T>& b, size_t n) {
  std::vector<T> out(n);
  EXPECT_TRUE(b.CopyToHost(std::span<T>(out), nullptr).ok());
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  return out;
}

void ExpectClose(const std::vector<float>& want, const std::vector<float>& got, double rel) {
  ASSERT_EQ(want.size(), got.size());
  double scale = 0;
  for (float w : want) scale = std::max(scale, static_cast<double>(std::fabs(w)));
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_NEAR(got[i], want[i], rel * scale) << "element " << i;
}

TEST(CudaOps, GemmMatchesCpuMatMul) {
  SW_SKIP_WITHOUT_GPU();
  const int64_t m = 5, n = 70, k = 96;
  const std::vector<float> x = Values(m * k, 1), w = Values(n * k, 2);
  std::vector<float> want(m * n);
  kernels::MatMulT(x.data(), w.data(), want.data(), m, n, k);
  auto blas = BlasHandles::Create(nullptr).value();
  auto dx = ToDevice(AsBf16(x)), dw = ToDevice(AsBf16(w));
  auto dy = DeviceBuffer<float>::Allocate(m * n).value();
  ASSERT_TRUE(Gemm(blas, dx.data(), dw.data(), dy.data(), m, n, k).ok());
  ExpectClose(want, ToHost(dy, m * n), 1e-5);  // same inputs, fp32 accumulation in both
}

TEST(CudaOps, DecodeAttentionMatchesSoftmaxByHand) {
  SW_SKIP_WITHOUT_GPU();
  // One sequence, 2 query heads sharing 1 KV head, head_dim 8, the query at position 5.
  const int64_t hd = 8, keys = 6, heads = 2;
  const std::vector<float> q = Values(heads * hd, 3), kc = Values(keys * hd, 4),
                           vc = Values(keys * hd, 5);
  std::vector<float> want(heads * hd, 0.0f);
  for (int64_t h = 0; h < heads; ++h) {
    std::vector<float> p(keys);
    for (int64_t j = 0; j < keys; ++j)
      p[j] = kernels::Dot(q.data() + h * hd, kc.data() + j * hd, hd) / std::sqrt(8.0f);
    kernels::Softmax(p.data(), keys);
    for (int64_t j = 0; j < keys; ++j) {
      for (int64_t d = 0; d < hd; ++d) want[h * hd + d] += p[j] * vc[j * hd + d];
    }
  }
  auto dq = ToDevice(q);
  auto dk = ToDevice(AsBf16(kc)), dv = ToDevice(AsBf16(vc));
  auto seqs = ToDevice(std::vector<int32_t>{0});
  auto out = DeviceBuffer<float>::Allocate(heads * hd).value();
  AttentionShape sh;
  sh.rows = 1;
  sh.len = 1;
  sh.pos0 = keys - 1;
  sh.heads = heads;
  sh.kv_heads = 1;
  sh.head_dim = hd;
  sh.group = 2;
  sh.max_tokens = keys;
  sh.scale = 1.0f / std::sqrt(8.0f);
  ASSERT_EQ(AttentionSplits(sh), 1);  // 2 blocks, 6 keys: one split, no workspace
  ASSERT_TRUE(
      Attention(dq.data(), dk.data(), dv.data(), seqs.data(), out.data(), nullptr, sh, nullptr)
          .ok());
  ExpectClose(want, ToHost(out, heads * hd), 1e-5);
}

// Causal GQA attention over a cache, computed directly on the CPU for any shape.
std::vector<float> AttentionOnCpu(const std::vector<float>& q, const std::vector<float>& kc,
                                  const std::vector<float>& vc, const std::vector<int32_t>& seqs,
                                  const AttentionShape& sh) {
  const int64_t hd = sh.head_dim, kw = sh.kv_heads * hd;
  std::vector<float> out(static_cast<size_t>(sh.rows * sh.heads * hd), 0.0f);
  for (int64_t r = 0; r < sh.rows; ++r) {
    const int64_t seq = seqs[static_cast<size_t>(r / sh.len)], p = sh.pos0 + r % sh.len;
    for (int64_t h = 0; h < sh.heads; ++h) {
      const int64_t kv = h / sh.group;
      std::vector<float> w(static_cast<size_t>(p + 1));
      for (int64_t j = 0; j <= p; ++j) {
        w[j] = sh.scale * kernels::Dot(q.data() + (r * sh.heads + h) * hd,
                                       kc.data() + (seq * sh.max_tokens + j) * kw + kv * hd, hd);
      }
      kernels::Softmax(w.data(), p + 1);
      for (int64_t j = 0; j <= p; ++j) {
        for (int64_t d = 0; d < hd; ++d) {
          out[(r * sh.heads + h) * hd + d] +=
              w[j] * vc[(seq * sh.max_tokens + j) * kw + kv * hd + d];
        }
      }
    }
  }
  return out;
}

// Decode (2 sequences, 300 keys: the keys split over blocks and merged) and a 130-token prefill
// (2 splits, so the first rows' second split holds no key) against the CPU.
TEST(CudaOps, SplitAttentionMatchesCpu) {
  SW_SKIP_WITHOUT_GPU();
  struct Case {
    int64_t rows, len, pos0, heads, kv_heads, hd;
    std::vector<int32_t> seqs;
  };
  for (const Case& t : {Case{2, 1, 299, 4, 2, 64, {1, 0}}, Case{130, 130, 0, 2, 1, 32, {0}}}) {
    AttentionShape sh;
    sh.rows = t.rows;
    sh.len = t.len;
    sh.pos0 = t.pos0;
    sh.heads = t.heads;
    sh.kv_heads = t.kv_heads;
    sh.head_dim = t.hd;
    sh.group = t.heads / t.kv_heads;
    sh.max_tokens = t.pos0 + t.len;
    sh.scale = 1.0f / std::sqrt(static_cast<float>(t.hd));
    ASSERT_GT(AttentionSplits(sh), 1) << t.rows;
    const size_t cache = static_cast<size_t>(2 * sh.max_tokens * t.kv_heads * t.hd);
    const std::vector<float> q = Values(static_cast<size_t>(t.rows * t.heads * t.hd), 21),
                             kc = Values(cache, 22), vc = Values(cache, 23);
    const std::vector<float> want = AttentionOnCpu(q, kc, vc, t.seqs, sh);
    auto dq = ToDevice(q);
    auto dk = ToDevice(AsBf16(kc)), dv = ToDevice(AsBf16(vc));
    auto seqs = ToDevice(t.seqs);
    auto out = DeviceBuffer<float>::Allocate(want.size()).value();
    auto work = DeviceBuffer<float>::Allocate(AttentionWorkspaceFloats(sh)).value();
    ASSERT_TRUE(Attention(dq.data(), dk.data(), dv.data(), seqs.data(), out.data(), work.data(), sh,
                          nullptr)
                    .ok());
    ExpectClose(want, ToHost(out, want.size()), 1e-5);
  }
}

TEST(CudaOps, TopKPicksTheLargestAndRenormalises) {
  SW_SKIP_WITHOUT_GPU();
  // Logits ln(1), ln(4), ln(2), ln(3): softmax 0.1, 0.4, 0.2, 0.3; top-2 = experts 1 and 3,
  // renormalised 0.4 / 0.7 and 0.3 / 0.7.
  auto logits = ToDevice(std::vector<float>{0.0f, std::log(4.0f), std::log(2.0f), std::log(3.0f)});
  auto ids = DeviceBuffer<int32_t>::Allocate(2).value();
  auto weights = DeviceBuffer<float>::Allocate(2).value();
  ASSERT_TRUE(TopK(logits.data(), 1, 4, 2, true, ids.data(), weights.data(), nullptr).ok());
  EXPECT_EQ(ToHost(ids, 2), (std::vector<int32_t>{1, 3}));
  const std::vector<float> w = ToHost(weights, 2);
  EXPECT_NEAR(w[0], 0.4 / 0.7, 1e-6);
  EXPECT_NEAR(w[1], 0.3 / 0.7, 1e-6);
}

TEST(CudaOps, Fp8GemmMatchesTheDequantizedProduct) {
  SW_SKIP_WITHOUT_GPU();
  const int64_t m = 4, n = 32, k = 64;
  const std::vector<float> x = Values(m * k, 6), w = Values(n * k, 7);
  std::vector<fp8> wq(n * k);
  for (size_t i = 0; i < wq.size(); ++i) wq[i] = fp8(w[i] * 2.0f);  // weight scale 0.5
  auto dx = ToDevice(x);
  auto dxq = DeviceBuffer<fp8>::Allocate(m * k).value();
  auto xs = DeviceBuffer<float>::Allocate(2).value();
  ASSERT_TRUE(QuantizeFp8(dx.data(), dxq.data(), xs.data(), m * k, nullptr).ok());
  auto dw = ToDevice(wq);
  auto ws = ToDevice(std::vector<float>{0.5f});
  auto dy = DeviceBuffer<float>::Allocate(m * n).value();
  auto blas = BlasHandles::Create(nullptr).value();
  const Status s = GemmFp8(blas, dxq.data(), xs.data(), dw.data(), ws.data(), dy.data(), m, n, k);
  if (!s.ok() && s.message().find("compute capability") != std::string::npos)
    GTEST_SKIP() << s.message();
  ASSERT_TRUE(s.ok()) << s.message();
  float amax = 0;
  for (float v : x) amax = std::max(amax, std::fabs(v));
  const std::vector<float> scale = ToHost(xs, 1);
  EXPECT_FLOAT_EQ(scale[0], amax / 448.0f);
  const std::vector<fp8> xq = ToHost(dxq, m * k);
  std::vector<float> want(m * n, 0.0f);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      for (int64_t c = 0; c < k; ++c) {
        want[i * n + j] +=
            static_cast<float>(xq[i * k + c]) * scale[0] * static_cast<float>(wq[j * k + c]) * 0.5f;
      }
    }
  }
  // Hopper's FP8 tensor cores keep about 14 bits of the running sum (DeepSeek-V3 Technical
  // Report, 3.3.2 "Increasing Accumulation Precision"), not fp32's 24: each of the k additions
  // may lose up to 2^-14 of the partial sum, so the error is bounded by k x 2^-14 of the
  // largest result (64 x 2^-14 = 3.9e-3); an H100 gave 1.35e-4. fp32 accumulation (1e-4)
  // would be too tight there; a wrong scale or layout gives O(1).
  ExpectClose(want, ToHost(dy, m * n), static_cast<double>(k) * std::ldexp(1.0, -14));
}

TEST(CudaOps, BlockFp8DequantizesWithItsBlockScale) {
  SW_SKIP_WITHOUT_GPU();
  // A 130 x 4 weight spans two 128-row blocks: rows 0..127 scale 2, rows 128..129 scale 3.
  const int64_t n = 130, k = 4;
  std::vector<fp8> q(n * k);
  for (size_t i = 0; i < q.size(); ++i)
    q[i] = fp8(static_cast<float>(i % 7) - 3.0f);  // exact in e4m3
  auto dq = ToDevice(q);
  auto scales = ToDevice(std::vector<float>{2.0f, 3.0f});
  auto w = DeviceBuffer<bf16>::Allocate(n * k).value();
  ASSERT_TRUE(DequantizeBlockFp8(dq.data(), scales.data(), w.data(), n, k, nullptr).ok());
  const std::vector<bf16> got = ToHost(w, n * k);
  for (int64_t i = 0; i < n * k; ++i) {
    const float want = (static_cast<float>(i % 7) - 3.0f) * (i / k < 128 ? 2.0f : 3.0f);
    EXPECT_EQ(__bfloat162float(got[i]), want) << i;
  }
}

}  // namespace
}  // namespace shardwise::cuda
