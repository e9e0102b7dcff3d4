// Decode's matrix products (m <= 8 rows of activations) as a bandwidth-bound kernel: each warp
// streams one weight row in 16-byte loads (8 bf16 per lane per step, the whole warp covering
// 256 values) and keeps the dot products of all m rows in registers, so every weight byte is
// read once; the bias is added as the sums are written. cuBLAS picks tiles built for larger m,
// and at m = 1 reached 53-86% of the H100's HBM bandwidth on llama-3.1-8b's shapes
// (docs/validation.md); this is the kernel that decode's roofline target rests on.
#include "device_math.cuh"
#include "shardwise/runtime/cuda/ops.h"

namespace shardwise::cuda {
namespace {

constexpr int kGemvThreads = 256;
constexpr int kGemvWarps = kGemvThreads / 32;
constexpr int kMaxGemvRows = 8;

__device__ void Accumulate(const uint4& w, const uint4& x, float& acc) {
  const __nv_bfloat162* wp = reinterpret_cast<const __nv_bfloat162*>(&w);
  const __nv_bfloat162* xp = reinterpret_cast<const __nv_bfloat162*>(&x);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 a = __bfloat1622float2(wp[i]), b = __bfloat1622float2(xp[i]);
    acc = fmaf(a.x, b.x, acc);
    acc = fmaf(a.y, b.y, acc);
  }
}

template <int M>
__global__ void GemvKernel(const bf16* __restrict__ x, const bf16* __restrict__ w,
                           const float* __restrict__ bias, float* __restrict__ y, int64_t n,
                           int64_t k) {
  const int64_t j = static_cast<int64_t>(blockIdx.x) * kGemvWarps + threadIdx.x / 32;
  if (j >= n) return;
  const int lane = threadIdx.x % 32;
  const uint4* row = reinterpret_cast<const uint4*>(w + j * k);
  const int64_t vectors = k / 8;
  float acc[M] = {};
#pragma unroll 4
  for (int64_t v = lane; v < vectors; v += 32) {
    const uint4 wv = __ldg(row + v);
#pragma unroll
    for (int m = 0; m < M; ++m) {
      Accumulate(wv, __ldg(reinterpret_cast<const uint4*>(x + m * k) + v), acc[m]);
    }
  }
#pragma unroll
  for (int m = 0; m < M; ++m) {
    const float sum = WarpSum(acc[m]);
    if (lane == 0) y[m * n + j] = sum + (bias != nullptr ? bias[j] : 0.0f);
  }
}

template <int M>
void Launch(const bf16* x, const bf16* w, const float* bias, float* y, int64_t n, int64_t k,
            cudaStream_t s) {
  const unsigned blocks = static_cast<unsigned>((n + kGemvWarps - 1) / kGemvWarps);
  GemvKernel<M><<<blocks, kGemvThreads, 0, s>>>(x, w, bias, y, n, k);
}

}  // namespace

bool GemvFits(int64_t m, int64_t k, const void* x, const void* w) {
  const auto aligned = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
  return m >= 1 && m <= kMaxGemvRows && k % 8 == 0 && aligned(x) && aligned(w);
}

Status Gemv(const bf16* x, const bf16* w, const float* bias, float* y, int64_t m, int64_t n,
            int64_t k, cudaStream_t s) {
  if (n == 0) return Status();
  switch (m) {
    case 1:
      Launch<1>(x, w, bias, y, n, k, s);
      break;
    case 2:
      Launch<2>(x, w, bias, y, n, k, s);
      break;
    case 3:
      Launch<3>(x, w, bias, y, n, k, s);
      break;
    case 4:
      Launch<4>(x, w, bias, y, n, k, s);
      break;
    case 5:
      Launch<5>(x, w, bias, y, n, k, s);
      break;
    case 6:
      Launch<6>(x, w, bias, y, n, k, s);
      break;
    case 7:
      Launch<7>(x, w, bias, y, n, k, s);
      break;
    default:
      Launch<8>(x, w, bias, y, n, k, s);
      break;
  }
  return Launched("decode product kernel");
}

}  // namespace shardwise::cuda
