// Multi-head latent attention (DeepSeek-V2 paper §2.1, DeepSeek-V3 Technical Report §2.1.1):
// Q through an optional low-rank bottleneck (q_lora), K and V compressed into one latent vector
// of kv_lora_rank per token plus a shared rotary key of qk_rope_head_dim, both cached. Prefill
// expands the cached latents into per-head keys and values (kv_b_proj); decode uses the absorbed
// form (q_nope folded into the latent space through W_UK, the output lifted back through W_UV),
// so it reads only the latent cache. TP splits the heads; every TP rank keeps the latent cache
// (it is shared by all heads). Under CP the cache is sharded by sequence: prefill passes latent
// blocks round the ring and expands each as it arrives; decode merges the CP ranks' partial
// results in the latent space before W_UV. One instance per layer per rank; thread-compatible.
#pragma once

#include <cstdint>
#include <vector>

#include "shardwise/common/status.h"
#include "shardwise/model/model_spec.h"
#include "shardwise/runtime/partial_attention.h"
#include "shardwise/runtime/weights.h"

namespace shardwise {

class MlaAttention {
 public:
  // Heads [head_begin, head_begin + heads) of layer `layer`, with a latent cache for
  // `sequences` x `cache_tokens`.
  static StatusOr<MlaAttention> Load(const ModelSpec& model, int64_t layer, int64_t head_begin,
                                     int64_t heads, WeightSource& weights, int64_t sequences,
                                     int64_t cache_tokens);

  // out[rows x hidden] = this rank's heads' share of the attention output for the rows of
  // `step` of each sequence of `seqs` (rows of h sequence-major); the caller all-reduces over
  // TP. Single-token steps use the absorbed form, longer ones the expanded form.
  Status Forward(const float* h, float* out, const std::vector<int>& seqs,
                 const AttentionStep& step);

 private:
  // Adds the keys of n cached tokens ([n x (kv_lora + rope)] with their positions) to the
  // expanded form's partial result.
  void AttendExpanded(const float* q, const int64_t* q_positions, int64_t rows, const float* cache,
                      const int64_t* positions, int64_t n, PartialAttention& state) const;

  ModelSpec model_;
  MlaSpec mla_;
  int64_t heads_ = 0, cache_tokens_ = 0;
  float softmax_scale_ = 0;
  std::vector<float> q_a_, q_a_norm_, q_b_;  // q_lora path, or q_b_ = q_proj when q_lora_rank 0
  std::vector<float> kv_a_, kv_a_norm_, kv_b_, o_;
  std::vector<float> cache_;  // [sequences][cache_tokens][kv_lora + rope]: latent, rotary key
};

}  // namespace shardwise
