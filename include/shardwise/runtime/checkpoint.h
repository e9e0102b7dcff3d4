// The Hugging Face tensor names and shapes of a model the runtime executes, and a writer that
// saves generated weights as a safetensors checkpoint (one file, or sharded with an index), so
// loading can be tested against the generated source and users can try --weights.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "shardwise/common/status.h"
#include "shardwise/model/model_spec.h"

namespace shardwise {

// (name, shape) of every tensor, in a stable order.
std::vector<std::pair<std::string, std::vector<int64_t>>> CheckpointTensors(const ModelSpec& model);

// Writes the seed's generated weights to `dir` as model.safetensors (shards == 1) or as
// `shards` files plus model.safetensors.index.json.
Status WriteGeneratedCheckpoint(const ModelSpec& model, uint64_t seed, const std::string& dir,
                                int shards);

}  // namespace shardwise
