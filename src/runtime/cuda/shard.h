// A rank's model shard on one GPU (private to src/runtime/cuda): bf16 weights, KV caches and
// the geometry RankModel::Load computed for the rank. cuda_weights.cc fills it (from a loaded
// RankModel, or generated on the device); cuda_stage.cc runs the forward pass over it.
#pragma once

#include <optional>
#include <vector>

#include "shardwise/runtime/cuda/device.h"
#include "shardwise/runtime/cuda/ops.h"
#include "shardwise/runtime/rank_model.h"
#include "shardwise/runtime/stage_compute.h"

namespace shardwise::cuda {

struct DeviceMlp {
  DeviceBuffer<bf16> gate, up, down;  // [inter x H], [inter x H], [H x inter]
  int64_t inter = 0;
};

struct DeviceLayer {
  DeviceBuffer<bf16> input_norm, post_norm, q, k, v, o, q_bias, k_bias, v_bias, o_bias, q_norm,
      k_norm;
  std::optional<DeviceMlp> mlp;
  DeviceBuffer<float> router;     // fp32: expert choice is discrete
  std::vector<float> score_bias;  // host: DeepSeek-V3's routing correction bias (routed on host)
  std::vector<DeviceMlp> experts;
  std::optional<DeviceMlp> shared;
  DeviceBuffer<bf16> shared_gate;
  DeviceBuffer<bf16> k_cache, v_cache;  // [sequences][max_tokens][kv_heads][head_dim]
};

// A rank's shard on the GPU with the geometry RankModel::Load computed for it.
struct Shard {
  ModelSpec model;
  Layout layout;
  RankPlacement place;
  bool first = false, last = false;
  int64_t head_begin = 0, heads = 0, kv_begin = 0, kv_heads = 0, expert_begin = 0;
  int64_t max_tokens = 0, sequences = 0;
  std::vector<DeviceLayer> layers;
  DeviceBuffer<bf16> embed, final_norm, lm_head;
  int64_t lm_head_rows = 0;  // this TP rank's vocabulary rows (RankModel's TP-split LM head)
};

// The forward pass over `shard` on `device`, its GEMMs through `blas` on `stream`.
std::unique_ptr<StageCompute> StageFromShard(Shard shard, Stream stream, BlasHandles blas,
                                             int device);

}  // namespace shardwise::cuda
