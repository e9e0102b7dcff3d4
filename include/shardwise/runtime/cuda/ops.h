// The CUDA backend's ops: one launch each, on a caller's stream, for every op of the CPU
// runtime (embedding, RMSNorm, RoPE, KV-cache append, GQA attention over the cache for prefill
// and decode, SwiGLU, router top-k, gather/scatter of expert rows) (the GEMMs of every
// projection are in gemm.h). Weights are bf16; the residual stream and every GEMM output are
// fp32 (fp32 accumulation), GEMM inputs bf16. Row-major throughout; "rows" are tokens in
// sequence-major order (row = sequence index * len + t). The kernels are deliberately plain
// (one block per row or per (row, head)); correctness first, checked against the CPU kernels
// in tests/runtime/cuda. Functions only enqueue work; errors surface as Status from the launch.
#pragma once

#include <cuda_bf16.h>

#include <cstdint>

#include "shardwise/common/status.h"
#include "shardwise/runtime/cuda/cuda_status.h"

namespace shardwise::cuda {

using bf16 = __nv_bfloat16;

// x[r] = float(table[tokens[r]]) for r < rows; table is [vocab x h].
Status Embed(const bf16* table, const int32_t* tokens, float* x, int64_t rows, int64_t h,
             cudaStream_t s);
// y = x / rms(x) * w per row of n (fp32 statistics). y may alias x for the float version.
Status RmsNorm(const float* x, const bf16* w, bf16* y, int64_t rows, int64_t n, double eps,
               cudaStream_t s);
Status RmsNorm(const float* x, const bf16* w, float* y, int64_t rows, int64_t n, double eps,
               cudaStream_t s);
// Rotates the halves (i, i + dim/2) of `heads` vectors of `head_dim` per row in place, at
// position pos0 + (row % len), by inv_freq[dim/2] radians per position, cos and sin times
// `scale` (rope_scaling's attention factor; 1 for plain RoPE). dim = head_dim.
Status Rope(float* v, int64_t rows, int64_t heads, int64_t head_dim, int64_t len, int64_t pos0,
            const float* inv_freq, float scale, cudaStream_t s);
// Writes each row's K and V ([rows x width] fp32) into the bf16 caches at
// cache[seqs[row / len]][pos0 + row % len], caches being [sequences][max_tokens][width].
Status AppendKv(const float* k, const float* v, bf16* k_cache, bf16* v_cache, const int32_t* seqs,
                int64_t rows, int64_t len, int64_t pos0, int64_t max_tokens, int64_t width,
                cudaStream_t s);

// Causal GQA attention of `rows` query rows against the caches (which already hold this
// step's keys): row r of sequence seqs[r / len] at position p = pos0 + r % len attends keys
// 0..p. Query head hh uses KV head (head_begin + hh) / group - kv_begin. q and out are
// [rows x heads x head_dim] fp32; out is written (not accumulated).
struct AttentionShape {
  int64_t rows = 0, len = 0, pos0 = 0;
  int64_t heads = 0, kv_heads = 0, head_dim = 0;
  int64_t head_begin = 0, kv_begin = 0, group = 1;
  int64_t max_tokens = 0;
  float scale = 1.0f;  // 1 / sqrt(head_dim)
};
// `workspace`: AttentionWorkspaceFloats(shape) floats (none when that is 0), where the blocks of
// a split (row, head) leave their partial sums.
Status Attention(const float* q, const bf16* k_cache, const bf16* v_cache, const int32_t* seqs,
                 float* out, float* workspace, const AttentionShape& shape, cudaStream_t s);
// Key splits per (row, head): 1 when rows x heads blocks are plenty (prefill), more in decode.
int64_t AttentionSplits(const AttentionShape& shape);
size_t AttentionWorkspaceFloats(const AttentionShape& shape);
// Keys one block can attend with the scores held in shared memory.
int64_t MaxAttentionKeys();

// out = bf16(silu(gate) * up), n elements.
Status SiluMul(const float* gate, const float* up, bf16* out, int64_t n, cudaStream_t s);
// x += y, n elements.
Status Add(float* x, const float* y, int64_t n, cudaStream_t s);
// y[r][j] += bias[j].
Status AddBias(float* y, const bf16* bias, int64_t rows, int64_t n, cudaStream_t s);
// Element-wise conversion.
Status ToBf16(const float* x, bf16* y, int64_t n, cudaStream_t s);
// y[r] = sigmoid(dot(h[r], w)) for the gated shared expert (h bf16 [rows x n], w bf16 [n]).
Status SigmoidGate(const bf16* h, const bf16* w, float* y, int64_t rows, int64_t n, cudaStream_t s);
// x[r][:] *= scale[r].
Status ScaleRows(float* x, const float* scale, int64_t rows, int64_t n, cudaStream_t s);

// Router: per row, softmax over `experts` logits, the k largest (ties to the lower index),
// weights renormalised to sum 1 when `renormalise`. ids and weights are [rows x k].
Status TopK(const float* logits, int64_t rows, int64_t experts, int64_t k, bool renormalise,
            int32_t* ids, float* weights, cudaStream_t s);
// out[i] = in[index[i]] for n rows of width h.
Status GatherRows(const bf16* in, const int32_t* index, bf16* out, int64_t n, int64_t h,
                  cudaStream_t s);
// out[index[i]] += weight[i] * y[i] for n rows of width h (indices distinct within one call).
Status ScatterAddRows(const float* y, const int32_t* index, const float* weight, float* out,
                      int64_t n, int64_t h, cudaStream_t s);

// x[i] = offset + scale * u_i with u_i uniform in [-1, 1) from a counter hash of (seed, i):
// generated weights made on the device (benchmarks of full-size shapes).
Status FillUniform(bf16* x, int64_t n, uint64_t seed, float scale, float offset, cudaStream_t s);

}  // namespace shardwise::cuda
