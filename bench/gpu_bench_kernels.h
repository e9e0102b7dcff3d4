// Kernels that only the GPU benchmarks need: an empty kernel and a tiny element-wise one (the
// fixed cost of one kernel inside a CUDA graph, gpu_kernel_latency_bench) and a random fp8 fill
// (the fp8 inputs of gpu_gemm_k_sweep_bench). Each enqueues one launch on `stream` and returns
// the launch's error code. C++17, so that the .cu file and C++20 host code both include it.
#pragma once

#include <cuda_fp8.h>
#include <cuda_runtime_api.h>

#include <cstdint>

namespace shardwise::bench {

// A kernel that does nothing, on `blocks` blocks of `threads` threads.
cudaError_t LaunchEmpty(int blocks, int threads, cudaStream_t stream);
// x[i] = 0.5 * x[i] + 1 for n floats, one element per thread, 256 threads per block.
cudaError_t LaunchScaleAdd(float* x, int64_t n, cudaStream_t stream);
// x[i] = e4m3(u_i), u_i uniform in [-1, 1) from a counter hash of (seed, i).
cudaError_t LaunchFillFp8(__nv_fp8_e4m3* x, int64_t n, uint64_t seed, cudaStream_t stream);

}  // namespace shardwise::bench
