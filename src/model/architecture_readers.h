// Per-architecture parts of config.json parsing (private to src/model). Each reader fills what
// its architecture adds to the common fields: biases, norms, MoE shape, MLA, sliding windows,
// hybrid layer patterns. The older architectures live in architecture_readers.cc; each newer
// one in its own file under architectures/, reusing the shared helpers declared here.
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

// Multimodal wrappers keep the language model under "text_config"; `text_architecture` reads
// it when text_config names no architecture of its own.
struct WrapperEntry {
  const char* architecture;
  const char* text_architecture;
};

const std::vector<WrapperEntry>& WrapperTable();

// Shared helpers.
// MoE from layer index `first_moe` on, every `step`-th layer, minus explicit dense layers
// ("mlp_only_layers").
Status MarkMoeLayers(const JsonObject& c, ModelSpec& spec, int64_t first_moe, int64_t step);
// DeepSeek-V3 style: MLA attention, routed + shared experts, group-limited routing, dense first
// layers.
Status ReadDeepseekV3(const JsonObject& c, ModelSpec& spec);

// The readers in architectures/.
Status ReadMiniMaxM2(const JsonObject& c, ModelSpec& spec);
Status ReadQwen35Moe(const JsonObject& c, ModelSpec& spec);
Status ReadNemotronH(const JsonObject& c, ModelSpec& spec);
Status ReadDeepseekSparse(const JsonObject& c, ModelSpec& spec);
Status ReadLlama4(const JsonObject& c, ModelSpec& spec);
// A config that names the common fields its own way, rewritten onto the standard keys: GPT-2's
// n_embd, n_head, n_layer, n_inner and n_positions (transformers' GPT2Config.attribute_map), with
// n_inner defaulting to 4 n_embd and the embeddings tied. Other architectures pass unchanged.
// A GPT-2 config missing one of its own required keys is an error naming that key.
StatusOr<nlohmann::json> WithStandardKeys(const nlohmann::json& config,
                                          const std::string& architecture,
                                          const std::string& source);

}  // namespace shardwise::model_internal
