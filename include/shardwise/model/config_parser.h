// Parsing of Hugging Face config.json files into ModelSpec.
//
// Supported architectures (the "architectures" key): LlamaForCausalLM, MistralForCausalLM,
// Qwen2ForCausalLM, Qwen3ForCausalLM, MixtralForCausalLM, Qwen2MoeForCausalLM,
// Qwen3MoeForCausalLM, DeepseekV3ForCausalLM, GptOssForCausalLM, GPT2LMHeadModel (n_embd,
// n_head, n_layer, n_inner, n_positions). Anything else is an error
// that lists these. Pure functions; thread-safe.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "shardwise/common/status.h"
#include "shardwise/model/model_spec.h"

namespace shardwise {

// Builds a ModelSpec from a parsed config.json. `source` names the file in errors and `name`
// becomes ModelSpec::name.
StatusOr<ModelSpec> ParseHfConfig(const nlohmann::json& config, const std::string& source,
                                  const std::string& name);

// Parses config.json text.
StatusOr<ModelSpec> ParseHfConfigText(const std::string& text, const std::string& source,
                                      const std::string& name);

// The architectures ParseHfConfig understands.
std::vector<std::string> SupportedArchitectures();

}  // namespace shardwise
