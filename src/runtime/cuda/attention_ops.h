// The CUDA backend's attention kernels (private to src/runtime/cuda): GQA and MLA before
// attention (norms, RoPE, cache writes), MLA's absorbed and expanded forms, and blockwise
// attention with partial results laid out as partial_attention.h lays them out (max, sum, then
// the unnormalised outputs), so CP ranks merge them on the host. Per-step values (positions,
// slots, the key count, RoPE frequencies) are read from device memory (StepView), so a decode
// step's kernels can be recorded once in a CUDA graph and replayed. C++17.
#pragma once

#include <cstdint>

#include "shardwise/runtime/cuda/ops.h"

namespace shardwise::cuda {

// The current step on the device (backend/kernels.h's StepRows).
struct StepView {
  const int32_t* seqs = nullptr;           // [sequences]
  const int64_t* positions = nullptr;      // [len]
  const int64_t* slots = nullptr;          // [len]
  const int64_t* key_positions = nullptr;  // [key_count]
  const int64_t* key_count = nullptr;      // one value
  const double* rope = nullptr;            // [1 + dim / 2]: attention factor, inv_freq
  int64_t sequences = 0, len = 0;
};

Status PrepareGqa(const float* qkv, int64_t heads, int64_t kv_heads, int64_t head_dim,
                  const float* q_norm, const float* k_norm, float eps, float* q_out, bf16* k_cache,
                  bf16* v_cache, int64_t capacity, const StepView& step, cudaStream_t s);
Status PrepareMla(float* q, const float* kv, const float* kv_norm, float eps, int64_t heads,
                  int64_t nope, int64_t rope, int64_t kv_lora, bf16* cache, int64_t capacity,
                  const StepView& step, cudaStream_t s);
// qa[r][h] = [W_UK[h]^T q_nope | q_rope]; kv_b is [heads x (nope + value_dim) x kv_lora].
Status MlaAbsorbQuery(const float* q, const bf16* kv_b, int64_t heads, int64_t nope, int64_t rope,
                      int64_t kv_lora, int64_t value_dim, float* qa, int64_t rows, cudaStream_t s);
// out[r][h] = W_UV[h] o_latent[r][h].
Status MlaLiftOutput(const float* o_latent, const bf16* kv_b, int64_t heads, int64_t nope,
                     int64_t kv_lora, int64_t value_dim, bf16* out, int64_t rows, cudaStream_t s);
// latents[b x n + j] = the latent of slot j of block seqs[b] (or b when seqs is null) of
// `source` ([* x capacity x (kv_lora + rope)]).
Status MlaGatherLatents(const bf16* source, const int32_t* seqs, int64_t capacity, int64_t kv_lora,
                        int64_t rope, int64_t sequences, int64_t n, bf16* latents, cudaStream_t s);
// From expanded [b x n + j][heads x (nope + value_dim)] and the source's rotary keys: keys
// [.. x heads x (nope + rope)] and values [.. x heads x value_dim].
Status MlaSplitExpanded(const float* expanded, const bf16* source, const int32_t* seqs,
                        int64_t capacity, int64_t heads, int64_t nope, int64_t rope,
                        int64_t kv_lora, int64_t value_dim, int64_t sequences, int64_t n,
                        bf16* keys, bf16* values, cudaStream_t s);

// One attention: the step's rows x heads queries of width `dim` against the keys of each
// sequence's block (backend/kernels.h's AttentionKeys), masked by position and window.
struct AttendArgs {
  const float* q = nullptr;
  int64_t rows = 0, heads = 0, dim = 0;
  const int64_t* kv_head = nullptr;  // [heads] on the device; null: key head 0 for all
  const bf16* keys = nullptr;
  const bf16* values = nullptr;
  bool by_sequence = true;
  int64_t capacity = 0, key_stride = 0, value_stride = 0, value_dim = 0;
  const int64_t* key_positions = nullptr;  // device
  const int64_t* key_count = nullptr;      // device, at most max_keys
  int64_t max_keys = 0;                    // sizes the key splits (fixed for a graph)
  int64_t window = 0;
  float scale = 1.0f;
  StepView step;
};
// The largest key or value head the kernel holds.
int64_t MaxAttentionHeadDim();
// Floats of scratch Attend needs for `a`.
size_t AttendWorkspaceFloats(const AttendArgs& a);
// partial (max, sum, out over rows x heads) = the keys' partial result, merged into `partial`
// unless `fresh`.
Status Attend(const AttendArgs& a, float* partial, bool fresh, float* workspace, cudaStream_t s);
// The same for keys that are all there are: the normalised result (sinks joining each softmax's
// denominator when set) straight into out.
Status AttendAll(const AttendArgs& a, const float* sinks, void* out, Elem out_type,
                 float* workspace, cudaStream_t s);
Status FinishAttention(const float* partial, const float* sinks, int64_t rows, int64_t heads,
                       int64_t value_dim, void* out, Elem out_type, cudaStream_t s);

}  // namespace shardwise::cuda
