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
// Rotary position embedding in place at `position` on the first `dim` values of `heads` vectors
// spaced `stride` apart, with inv_freq[dim / 2] radians per position and cos and sin scaled by
// `scale`. Pairs are (i, i + dim/2) (the Hugging Face Llama convention, rotating halves) or,
// when `interleaved`, (2i, 2i + 1) (DeepSeek's complex-number form).
void Rope(float* v, int64_t heads, int64_t stride, int64_t dim, int64_t position,
          const double* inv_freq, double scale, bool interleaved);
// gate = silu(gate) * up, element-wise.
void SiluMul(float* gate, const float* up, int64_t n);
// In-place softmax of n values.
void Softmax(float* x, int64_t n);

}  // namespace shardwise::kernels
