// The GEMMs of the CUDA backend, through cuBLAS: row-major, weights as [n x k] (Hugging Face
// nn.Linear layout), bf16 inputs with fp32 output and accumulation. Enqueued on the handles'
// stream.
#pragma once

#include <cstdint>

#include "shardwise/runtime/cuda/device.h"
#include "shardwise/runtime/cuda/fp8.h"
#include "shardwise/runtime/cuda/ops.h"

namespace shardwise::cuda {

// y[m x n] (fp32) = x[m x k] (bf16) . w[n x k]^T (bf16) + beta * y, fp32 accumulation (cuBLAS).
Status Gemm(BlasHandles& blas, const bf16* x, const bf16* w, float* y, int64_t m, int64_t n,
            int64_t k, float beta = 0.0f);
// The same in fp32 throughout (the router: expert choice is discrete, so it is kept exact).
Status GemmF32(BlasHandles& blas, const float* x, const float* w, float* y, int64_t m, int64_t n,
               int64_t k);

// y[m x n] (fp32) = (x_scale * x[m x k]) . (w_scale * w[n x k])^T with fp32 accumulation,
// through cuBLASLt; the scales are device pointers to one float each. k must be a multiple of
// 16 (cuBLASLt's fp8 alignment).
Status GemmFp8(BlasHandles& blas, const fp8* x, const float* x_scale, const fp8* w,
               const float* w_scale, float* y, int64_t m, int64_t n, int64_t k);
// The same with a bf16 output, as serving engines write it (bench/gpu_gemm_k_sweep_bench.cc).
Status GemmFp8Bf16Out(BlasHandles& blas, const fp8* x, const float* x_scale, const fp8* w,
                      const float* w_scale, bf16* y, int64_t m, int64_t n, int64_t k);

}  // namespace shardwise::cuda
