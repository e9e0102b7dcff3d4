// The benchmarks' own kernels (see gpu_bench_kernels.h).
#include "gpu_bench_kernels.h"

namespace shardwise::bench {
namespace {

constexpr int kThreads = 256;

__global__ void EmptyKernel() {}

__global__ void ScaleAddKernel(float* x, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) x[i] = 0.5f * x[i] + 1.0f;
}

// splitmix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number generators").
__device__ uint64_t Mix(uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

__global__ void FillFp8Kernel(__nv_fp8_e4m3* x, int64_t n, uint64_t seed) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const float u = static_cast<float>(Mix(seed * 0x100000001b3ull + i) >> 40) * 0x1p-23f - 1.0f;
    x[i] = __nv_fp8_e4m3(u);
  }
}

}  // namespace

cudaError_t LaunchEmpty(int blocks, int threads, cudaStream_t stream) {
  EmptyKernel<<<blocks, threads, 0, stream>>>();
  return cudaGetLastError();
}

cudaError_t LaunchScaleAdd(float* x, int64_t n, cudaStream_t stream) {
  ScaleAddKernel<<<static_cast<int>((n + kThreads - 1) / kThreads), kThreads, 0, stream>>>(x, n);
  return cudaGetLastError();
}

cudaError_t LaunchFillFp8(__nv_fp8_e4m3* x, int64_t n, uint64_t seed, cudaStream_t stream) {
  FillFp8Kernel<<<1024, kThreads, 0, stream>>>(x, n, seed);
  return cudaGetLastError();
}

}  // namespace shardwise::bench
