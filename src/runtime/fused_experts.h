// gpt-oss stores a MoE layer's experts fused, input-major (y = x W): gate_up_proj [E, H, 2I]
// with gate and up interleaved along the last axis (even columns gate, odd columns up),
// down_proj [E, I, H], and biases gate_up_proj_bias [E, 2I] and down_proj_bias [E, H]. This
// reads one expert's FFN shard (intermediate units `part`) in the runtime's [out x in] layout.
// Pure function of the weight source; thread-compatible.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "shardwise/common/status.h"
#include "shardwise/runtime/weights.h"

namespace shardwise {

struct ExpertShard {
  std::vector<float> gate, up, down;                 // [part x H], [part x H], [H x part]
  std::vector<float> gate_bias, up_bias, down_bias;  // [part], [part], [H] (empty: no bias)
  // [H]: the largest |w| of each row of the expert's whole down projection, over all its
  // intermediate units (for int8 scales that do not depend on the sharding); empty unless asked.
  std::vector<float> down_row_abs_max;
};

// `prefix` is "model.layers.N.mlp.experts."; the down bias is read only when `down_bias`
// (one expert-TP rank adds it), the down rows' magnitudes only when `down_row_abs_max`.
StatusOr<ExpertShard> ReadFusedExpert(WeightSource& weights, const std::string& prefix,
                                      int64_t expert, int64_t experts, int64_t hidden,
                                      int64_t inter, Slice part, bool down_bias,
                                      bool down_row_abs_max);

}  // namespace shardwise
