// fp8 (e4m3) weights for the CUDA backend. Per-tensor scaled weights multiply through
// cuBLASLt's fp8 GEMM (Hopper and later: compute capability >= 8.9), with the activations
// quantized to e4m3 (GemmFp8 in gemm.h) under their own per-tensor scale (amax / 448, 448 being
// e4m3's largest finite value); 128x128 block-scaled weights (DeepSeek-V3's checkpoint format) are
// dequantized to bf16 for the bf16 GEMM. Not yet wired into the forward pass: the runtime's
// checkpoints load as fp32/bf16 (see docs/commands/run.md).
#pragma once

#include <cuda_fp8.h>

#include <cstdint>

#include "shardwise/runtime/cuda/ops.h"

namespace shardwise::cuda {

using fp8 = __nv_fp8_e4m3;
// e4m3's largest finite magnitude (OCP 8-bit floating point specification, E4M3).
inline constexpr float kFp8E4m3Max = 448.0f;

// scale[0] = max|x| / 448 (1 when x is all zero), then q = e4m3(x / scale[0]); n elements.
// `scale` points to two floats on the device (scale[1] is scratch).
Status QuantizeFp8(const float* x, fp8* q, float* scale, int64_t n, cudaStream_t s);
// w[i][j] = float(q[i][j]) * scales[i / 128][j / 128] as bf16, for an [n x k] weight whose
// scales are [ceil(n / 128) x ceil(k / 128)].
Status DequantizeBlockFp8(const fp8* q, const float* scales, bf16* w, int64_t n, int64_t k,
                          cudaStream_t s);
}  // namespace shardwise::cuda
