// Per-architecture parts of config.json parsing (private to src/model). Each reader fills what
// its architecture adds to the common fields: biases, norms, MoE shape, MLA, sliding windows.
#pragma once

#include <string>
#include <vector>

#include "shardwise/common/json_fields.h"
#include "shardwise/model/model_spec.h"

namespace shardwise::model_internal {

using ArchitectureReader = Status (*)(const JsonObject& config, ModelSpec& spec);

struct ArchitectureEntry {
  const char* architecture;
  ArchitectureReader read;
};

const std::vector<ArchitectureEntry>& ArchitectureTable();

// A config that names the common fields its own way, rewritten onto the standard keys: GPT-2's
// n_embd, n_head, n_layer, n_inner and n_positions (transformers' GPT2Config.attribute_map), with
// n_inner defaulting to 4 n_embd and the embeddings tied. Other architectures pass unchanged.
// A GPT-2 config missing one of its own required keys is an error naming that key.
StatusOr<nlohmann::json> WithStandardKeys(const nlohmann::json& config,
                                          const std::string& architecture,
                                          const std::string& source);

}  // namespace shardwise::model_internal
