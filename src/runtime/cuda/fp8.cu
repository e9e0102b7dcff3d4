// fp8 quantization kernels (see fp8.h).
#include <algorithm>
#include <cfloat>

#include "shardwise/runtime/cuda/fp8.h"

namespace shardwise::cuda {
namespace {

constexpr int kThreads = 256;

// max|x| into *amax (as the bit pattern of a non-negative float, which orders like the float).
__global__ void AmaxKernel(const float* x, int64_t n, unsigned int* amax) {
  float local = 0;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    local = fmaxf(local, fabsf(x[i]));
  }
  atomicMax(amax, __float_as_uint(local));
}

__global__ void QuantizeKernel(const float* x, fp8* q, float* scale, const unsigned int* amax,
                               int64_t n) {
  const float a = __uint_as_float(*amax);
  const float sc = a > 0 ? a / kFp8E4m3Max : 1.0f;
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i == 0) *scale = sc;
  if (i < n) q[i] = fp8(x[i] / sc);
}

__global__ void DequantizeBlockKernel(const fp8* q, const float* scales, bf16* w, int64_t n,
                                      int64_t k) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n * k) return;
  const int64_t row = i / k, col = i % k, blocks_k = (k + 127) / 128;
  w[i] = __float2bfloat16(static_cast<float>(q[i]) * scales[(row / 128) * blocks_k + col / 128]);
}

}  // namespace

Status QuantizeFp8(const float* x, fp8* q, float* scale, int64_t n, cudaStream_t s) {
  if (n == 0) return Status();
  unsigned int* amax = reinterpret_cast<unsigned int*>(scale + 1);  // scale[1]: scratch
  SW_RETURN_IF_ERROR(
      CudaStatus(cudaMemsetAsync(amax, 0, sizeof(unsigned int), s), "cudaMemsetAsync"));
  const int blocks = static_cast<int>(std::min<int64_t>((n + kThreads - 1) / kThreads, 1024));
  AmaxKernel<<<blocks, kThreads, 0, s>>>(x, n, amax);
  SW_RETURN_IF_ERROR(CudaStatus(cudaGetLastError(), "fp8 amax kernel"));
  QuantizeKernel<<<static_cast<int>((n + kThreads - 1) / kThreads), kThreads, 0, s>>>(x, q, scale,
                                                                                      amax, n);
  return CudaStatus(cudaGetLastError(), "fp8 quantize kernel");
}

Status DequantizeBlockFp8(const fp8* q, const float* scales, bf16* w, int64_t n, int64_t k,
                          cudaStream_t s) {
  if (n * k == 0) return Status();
  DequantizeBlockKernel<<<static_cast<int>((n * k + kThreads - 1) / kThreads), kThreads, 0, s>>>(
      q, scales, w, n, k);
  return CudaStatus(cudaGetLastError(), "fp8 block dequantize kernel");
}

}  // namespace shardwise::cuda
