// Helpers shared by the CUDA backend's kernel files: launch sizes, launch errors, warp and block
// reductions. Internal to src/runtime/cuda; C++17.
#pragma once

#include <cfloat>
#include <cstdint>

#include "shardwise/runtime/cuda/cuda_status.h"

namespace shardwise::cuda {

inline constexpr int kThreads = 256;

inline int Blocks(int64_t n) { return static_cast<int>((n + kThreads - 1) / kThreads); }

// The error of the last launch, naming `what`.
inline Status Launched(const char* what) { return CudaStatus(cudaGetLastError(), what); }

__device__ inline float WarpSum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

__device__ inline float WarpMax(float v) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// Sum (or max) over the block, returned to every thread; `scratch` holds 32 floats.
template <bool kMax>
__device__ inline float BlockReduce(float v, float* scratch) {
  v = kMax ? WarpMax(v) : WarpSum(v);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = blockDim.x / 32;
  __syncthreads();  // scratch may still be read from a previous reduction
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  float r = kMax ? -INFINITY : 0.0f;
  for (int w = 0; w < warps; ++w) r = kMax ? fmaxf(r, scratch[w]) : r + scratch[w];
  return r;
}

__device__ inline float BlockSum(float v, float* scratch) { return BlockReduce<false>(v, scratch); }
__device__ inline float BlockMax(float v, float* scratch) { return BlockReduce<true>(v, scratch); }

}  // namespace shardwise::cuda
