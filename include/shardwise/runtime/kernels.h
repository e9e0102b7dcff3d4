// CPU kernels of the runtime. Activations are fp32; weights fp32, bf16 or int8
// (weight_matrix.h), with fp32 accumulation. The matrix products, dot products, exponentials
// and SwiGLU run on the widest instruction set this CPU has, chosen at run time (AVX-512 with
// AVX512-BF16 and VNNI, AVX-512, AVX2+FMA, or portable code at the baseline ISA; the build sets
// no -march): register tiles of 4 x 4 (AVX-512) outputs, each a sum of 16-lane partial sums,
// over blocks of weight rows kept in L2 (src/runtime/simd/). Without the dot-product
// instructions, bf16 and int8 weights are widened to fp32 as they are read; with them, the
// activations are rounded to the weights' format instead (bf16, or int8 per block of 32 values
// with one scale each, as llama.cpp's BF16 and Q8_0 products do) and multiplied natively, so a
// product costs one instruction per 32 (bf16) or 64 (int8) weights. A pool's threads split a
// product's weight rows. Thread-compatible; a ThreadPool is used by one caller at a time.
#pragma once

#include <cstdint>
#include <string>

#include "shardwise/runtime/thread_pool.h"
#include "shardwise/runtime/weight_matrix.h"

namespace shardwise::kernels {

// The instruction set the kernels run on here: "avx512-bf16-vnni", "avx512", "avx2" or
// "portable".
std::string KernelIsa();

// y[m x n] = x[m x k] . w[n x k]^T (+ bias[n]): every weight row is read once for all m rows.
void MatMulT(const float* x, const float* w, float* y, int64_t m, int64_t n, int64_t k,
             const float* bias = nullptr);
// y[m x w.rows()] = x[m x w.cols()] . w^T (+ bias), in w's format, the rows of w split over
// `pool`'s threads (none: the calling thread alone).
void MatMulT(const float* x, const WeightMatrix& w, float* y, int64_t m,
             const float* bias = nullptr, ThreadPool* pool = nullptr);
// y[i * ldy + j] = x[i * ldx ..] . w[j * ldw ..] over k values, for i < m and j < n: rows of
// x and w spaced apart (heads inside a token's row).
void MatMulTStrided(const float* x, int64_t ldx, const float* w, int64_t ldw, float* y, int64_t ldy,
                    int64_t m, int64_t n, int64_t k);
// Dot product of two length-n vectors.
float Dot(const float* a, const float* b, int64_t n);
// x[i] = exp(x[i] - shift) for i < n (0 where that is below the smallest normal float);
// returns the sum.
float ExpShifted(float* x, int64_t n, float shift);
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
// gate = (clamp(up, -limit, limit) + 1) * g * sigmoid(1.702 g) with g = min(gate, limit): the
// clamped SwiGLU of gpt-oss's experts (gpt-oss model card).
void ClampedSwigluMul(float* gate, const float* up, int64_t n, float limit);
// In-place softmax of n values.
void Softmax(float* x, int64_t n);

}  // namespace shardwise::kernels
