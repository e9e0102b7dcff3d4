// The CPU kernels of one instruction set, and the choice among them for the CPU found at run
// time. Each set lives in its own file compiled for its instruction set (simd/*_kernels.cc);
// the build sets no -march, so the binary runs on any x86-64 and picks AVX-512, AVX2+FMA or the
// portable set once, at first use (__builtin_cpu_supports). Internal to the runtime; the
// public entry points are in shardwise/runtime/kernels.h. Thread-safe.
#pragma once

#include <cstdint>
#include <vector>

namespace shardwise::kernels {

// y[i * ldy + j] = sum_kk x[i * ldx + kk] * w[j * ldw + kk] for i < m, j < n, kk < k: the
// rows of x against the rows of w (both k-contiguous), times scales[j] when `scales` is set
// (int8 rows).
template <typename W>
struct MatMulArgs {
  const float* x = nullptr;
  int64_t ldx = 0, m = 0;
  const W* w = nullptr;
  int64_t ldw = 0, n = 0;
  const float* scales = nullptr;
  int64_t k = 0;
  float* y = nullptr;
  int64_t ldy = 0;
};

// y[i * ldy + j] = sum_kk x[i * ldx + kk] * w[j * ldw + kk] with x already rounded to bf16.
struct Bf16Args {
  const uint16_t* x = nullptr;
  int64_t ldx = 0, m = 0;
  const uint16_t* w = nullptr;
  int64_t ldw = 0, n = 0, k = 0;
  float* y = nullptr;
  int64_t ldy = 0;
};

// y[i * ldy + j] = w_scales[j] x sum over blocks b of x_scales[i][b] x sum_{kk in b} x[i][kk]
// w[j][kk]: x quantised to int8 per block of kInt8Block values (x_scales [m x ldxs], ldxs =
// ceil(k / kInt8Block)), w int8 with one scale per row. x_offsets[i] = 128 x sum_b
// x_scales[i][b] x (the sum of row i's codes in b): the kernel adds 128 to every weight
// (vpdpbusd multiplies unsigned by signed bytes) and takes it off with this.
struct Int8Args {
  const int8_t* x = nullptr;
  const float* x_scales = nullptr;
  const float* x_offsets = nullptr;
  int64_t ldx = 0, ldxs = 0, m = 0;
  const int8_t* w = nullptr;
  const float* w_scales = nullptr;
  int64_t ldw = 0, n = 0, k = 0;
  float* y = nullptr;
  int64_t ldy = 0;
};

// Activations per block of this many values share one int8 scale (llama.cpp's Q8_0 block).
inline constexpr int64_t kInt8Block = 32;

struct KernelSet {
  const char* name = "";
  void (*matmul_f32)(const MatMulArgs<float>& a) = nullptr;
  void (*matmul_bf16)(const MatMulArgs<uint16_t>& a) = nullptr;
  void (*matmul_int8)(const MatMulArgs<int8_t>& a) = nullptr;
  float (*dot)(const float* a, const float* b, int64_t n) = nullptr;
  // x[i] = exp(x[i] - shift) for i < n; returns their sum. Arguments below the smallest
  // normal float's logarithm give 0.
  float (*exp_shifted)(float* x, int64_t n, float shift) = nullptr;
  // gate[i] = silu(gate[i]) * up[i] = gate[i] / (1 + exp(-gate[i])) * up[i].
  void (*silu_mul)(float* gate, const float* up, int64_t n) = nullptr;
  // Products with activations in the weights' format (null where the CPU lacks the dot-product
  // instructions: the float products above then widen the weights instead).
  void (*matmul_bf16_pairs)(const Bf16Args& a) = nullptr;
  void (*matmul_int8_blocks)(const Int8Args& a) = nullptr;
};

// One per instruction set; the AVX ones are null where the build has no x86-64 files.
const KernelSet& PortableKernels();
const KernelSet* Avx2Kernels();
const KernelSet* Avx512Kernels();
// The AVX-512 set with AVX512-BF16 and VNNI products (simd/avx512_dot_kernels.cc).
KernelSet Avx512DotKernels(const KernelSet& avx512);

// The sets this CPU can run, fastest first (the portable set last, always there).
std::vector<const KernelSet*> SupportedKernelSets();
// The fastest of them: what the runtime uses.
const KernelSet& ActiveKernels();

}  // namespace shardwise::kernels
