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

}  // namespace shardwise::model_internal
