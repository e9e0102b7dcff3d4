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

// The decode product kernel against the CPU's, for every row count it takes and a bias.
TEST(CudaOps, GemvMatchesCpuMatMul) {
  SW_SKIP_WITHOUT_GPU();
  const int64_t n = 300, k = 264;  // k a multiple of 8, not of the warp's 256
  const std::vector<float> w = Values(n * k, 7), bias = Values(n, 8);
  for (int64_t m = 1; m <= 8; ++m) {
    const std::vector<float> x = Values(m * k, 9 + static_cast<uint32_t>(m));
    std::vector<float> want(m * n);
    kernels::MatMulT(x.data(), w.data(), want.data(), m, n, k, bias.data());
    auto dx = ToDevice(AsBf16(x)), dw = ToDevice(AsBf16(w));
    auto db = ToDevice(bias);
    auto dy = DeviceBuffer<float>::Allocate(m * n).value();
    ASSERT_TRUE(GemvFits(m, k, dx.data(), dw.data()));
    ASSERT_TRUE(Gemv(dx.data(), dw.data(), db.data(), dy.data(), m, n, k, nullptr).ok());
    ExpectClose(want, ToHost(dy, m * n), 1e-5);
  }
  EXPECT_FALSE(GemvFits(9, 264, nullptr, nullptr));
  EXPECT_FALSE(GemvFits(1, 100, nullptr, nullptr));  // k not a multiple of 8
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
