// CPU kernels of the runtime, fp32. Plain loops written so the compiler vectorises them (no
// BLAS: decode is matrix-vector work bound by memory bandwidth, where a streaming loop over
// each weight row already reaches the bound; see bench/decode_bench). Thread-compatible.
#pragma once

#include <cstdint>

namespace shardwise::kernels {

// y[m x n] = x[m x k] . w[n x k]^T (+ bias[n]): every weight row is read once for all m rows.
void MatMulT(const float* x, const float* w, float* y, int64_t m, int64_t n, int64_t k,
             const float* bias = nullptr);
// Dot product of two length-n vectors.
float Dot(const float* a, const float* b, int64_t n);
// y = x / rms(x) * weight, row by row (m rows of n).
void RmsNorm(const float* x, const float* weight, float* y, int64_t m, int64_t n, double eps);
// Rotary position embedding in place on `heads` vectors of head_dim at `position`, using the
// Hugging Face convention (rotating the two halves of each head).
void Rope(float* v, int64_t heads, int64_t head_dim, int64_t position, double theta);
// gate = silu(gate) * up, element-wise.
void SiluMul(float* gate, const float* up, int64_t n);
// In-place softmax of n values.
void Softmax(float* x, int64_t n);

}  // namespace shardwise::kernels
