// A rank's weights and KV caches as backend tensors (private to runtime/forward): what
// LoadStageWeights reads for the shard shard_geometry.h gives the rank. Q/K/V are one fused
// matrix [q | k | v] rows and gate/up one [gate | up], so each is one product; rows are
// concatenated before conversion, so int8 scales and bf16 rounding are those of the separate
// matrices.
#pragma once

#include <optional>
#include <vector>

#include "shardwise/layout/expert_placement.h"
#include "shardwise/layout/shard_geometry.h"
#include "shardwise/model/model_spec.h"
#include "shardwise/runtime/backend/kernels.h"
#include "shardwise/runtime/forward/stage_forward.h"

namespace shardwise {

struct MlpWeights {
  TensorPtr gate_up, gate_up_bias, down, down_bias;  // biases: gpt-oss experts only
  int64_t inter = 0;                                 // this rank's FFN columns
  float swiglu_limit = 0;                            // > 0: gpt-oss's clamped SwiGLU
};

struct GqaWeights {
  TensorPtr qkv, qkv_bias, o, o_bias, q_norm, k_norm;
  TensorPtr k_cache, v_cache;  // [sequences x cache_tokens x kv_heads x head_dim]
};

struct MlaWeights {
  TensorPtr q_a, q_a_norm, q_b;  // q_b is q_proj when q_lora_rank is 0 (q_a empty)
  TensorPtr kv_a, kv_a_norm, kv_b, o;
  TensorPtr cache;  // [sequences x cache_tokens x (kv_lora + rope)]
};

struct MoeWeights {
  TensorPtr router, router_bias;    // kFloat [experts x hidden], [experts]
  std::vector<float> score_bias;    // DeepSeek-V3's routing correction bias (host: routing is)
  std::vector<MlpWeights> experts;  // this EP rank's slots, its expert-TP share of each
  std::optional<MlpWeights> shared;
  TensorPtr shared_gate;  // kFloat [hidden]
};

struct LayerWeights {
  TensorPtr input_norm, post_norm;
  int64_t window = 0;  // sliding-window layers: keys kept per query
  TensorPtr sinks;     // [heads], gpt-oss's learned sink logits
  std::optional<GqaWeights> gqa;
  std::optional<MlaWeights> mla;
  std::optional<MlpWeights> mlp;
  std::optional<MoeWeights> moe;
};

struct StageWeights {
  std::vector<LayerWeights> layers;
  TensorPtr embed, final_norm, lm_head;  // first stage; last stage (vocab rows padded)
};

StatusOr<StageWeights> LoadStageWeights(const ModelSpec& model, const RankShard& shard,
                                        const ExpertPlacement& placement, WeightOrigin origin,
                                        WeightStorage storage, Kernels& kernels, int64_t sequences,
                                        int64_t cache_tokens);

}  // namespace shardwise
