// The CUDA backend's element-wise, row and reduction ops (the attention ops are in
// attention_ops.h, the products in gemm.h): one launch each, on a caller's stream. fp32 for the
// residual stream, products' outputs and parameters; bf16 for products' inputs, caches and
// weights. Row-major throughout; rows are tokens, sequence-major. Checked against the CPU
// backend op by op (tests/runtime/backend_ops_test.cc). Functions only enqueue work; errors
// surface as Status from the launch. C++17 (the .cu files include it).
#pragma once

#include <cuda_bf16.h>

#include <cstdint>

#include "shardwise/common/status.h"
#include "shardwise/runtime/cuda/cuda_status.h"

namespace shardwise::cuda {

using bf16 = __nv_bfloat16;

// The element type of a buffer.
enum class Elem { kF32, kBf16 };

// x[r] = float(table[tokens[r]]) for r < rows; table is [vocab x h].
Status Embed(const bf16* table, const int32_t* tokens, float* x, int64_t rows, int64_t h,
             cudaStream_t s);
// y = x / rms(x) * w per row of n (fp32 statistics), y of type `y_type`.
Status RmsNorm(const float* x, const float* w, void* y, Elem y_type, int64_t rows, int64_t n,
               float eps, cudaStream_t s);
// x += y, then out = RmsNorm(x): the residual add fused with the next norm.
Status AddRmsNorm(float* x, const float* y, const float* w, void* out, Elem out_type, int64_t rows,
                  int64_t n, float eps, cudaStream_t s);
// x += y, n elements.
Status Add(float* x, const float* y, int64_t n, cudaStream_t s);
// out[i] = in[i] for n elements, converting types.
Status Convert(const void* in, Elem in_type, void* out, Elem out_type, int64_t n, cudaStream_t s);
// y[r][j] += bias[j].
Status AddBias(float* y, const float* bias, int64_t rows, int64_t n, cudaStream_t s);
// act[r] = bf16(silu(g) * u) over gate_up[r] = [g | u] (inter each); limit > 0: gpt-oss's
// clamped SwiGLU.
Status SwiGlu(const float* gate_up, bf16* act, int64_t rows, int64_t inter, float limit,
              cudaStream_t s);
// out[i] = in[index[i]] for n rows of `width` elements of `type`.
Status GatherRows(const void* in, Elem type, const int32_t* index, void* out, int64_t n,
                  int64_t width, cudaStream_t s);
// out[index[i]] += weight[i] * in[i] for n rows of `width` (indices distinct within one call).
Status ScatterAddRows(const float* in, const int32_t* index, const float* weight, float* out,
                      int64_t n, int64_t width, cudaStream_t s);
// y[r] += g[r] * shared[r], g[r] = sigmoid(x[r] . gate) (gate null: 1), rows of `width`.
Status AddGatedRows(float* y, const float* shared, const float* x, const float* gate, int64_t rows,
                    int64_t width, cudaStream_t s);

// A row of logits reduced (backend/kernels.h's LogitStat).
struct DeviceLogitStat {
  int64_t best_index;
  float best, second, max_abs;
  int64_t non_finite;
};
// Per row of logits [rows x width], over its first `valid` columns.
Status LogitStats(const float* logits, int64_t rows, int64_t width, int64_t valid,
                  DeviceLogitStat* out, cudaStream_t s);
// *first = the smallest i < n with x[i] not finite (left as is when none; start it at ~0).
Status FirstNonFinite(const float* x, int64_t n, unsigned long long* first, cudaStream_t s);

// y[m x n] (fp32) = x[m x k] (bf16) . w[n x k]^T (bf16) (+ bias[n]), fp32 accumulation, for
// decode's few rows: every weight read once at the bandwidth of the memory. Takes what GemvFits
// accepts (m <= 8, k a multiple of 8, 16-byte aligned x and w); cuBLAS takes the rest (gemm.h).
bool GemvFits(int64_t m, int64_t k, const void* x, const void* w);
Status Gemv(const bf16* x, const bf16* w, const float* bias, float* y, int64_t m, int64_t n,
            int64_t k, cudaStream_t s);

// x[i] = offset + scale * u_i with u_i uniform in [-1, 1) from a counter hash of (seed, i):
// generated weights made on the device (benchmarks of full-size shapes).
Status FillUniform(bf16* x, int64_t n, uint64_t seed, float scale, float offset, cudaStream_t s);

}  // namespace shardwise::cuda
