// Parsing of Hugging Face config.json files into ModelSpec.
//
// Supported architectures (the "architectures" key): LlamaForCausalLM, MistralForCausalLM,
// Qwen2ForCausalLM, Qwen3ForCausalLM, MixtralForCausalLM, Qwen2MoeForCausalLM,
// Qwen3MoeForCausalLM, DeepseekV3ForCausalLM, GptOssForCausalLM, MiniMaxM2ForCausalLM,
// Qwen3_5MoeForCausalLM, Qwen3NextForCausalLM, NemotronHForCausalLM, DeepseekV32ForCausalLM,
// GlmMoeDsaForCausalLM, Llama4ForCausalLM, GPT2LMHeadModel (n_embd, n_head, n_layer, n_inner,
// n_positions); and the multimodal wrappers whose language model is under "text_config"
// (Qwen3.5, Kimi-K2.5, Llama 4, Qwen3-VL), of which only the language model is read. Anything
// else is an error that lists these. Pure functions; thread-safe.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "shardwise/common/status.h"
#include "shardwise/model/model_spec.h"

namespace shardwise {

// Builds a ModelSpec from a parsed config.json. `source` names the file in errors and `name`
// becomes ModelSpec::name. `hf_quant_config`, when given, is a ModelOpt hf_quant_config.json
// found beside config.json (NVFP4 exports); it sets the per-module weight formats.
StatusOr<ModelSpec> ParseHfConfig(const nlohmann::json& config, const std::string& source,
                                  const std::string& name,
                                  const nlohmann::json* hf_quant_config = nullptr);

// Parses config.json text. Python's json module writes non-finite floats as bare NaN, Infinity
// and -Infinity (Nemotron-H's time_step_limit); those become strings, so a key we read that
// holds one is an error and a key we ignore is harmless.
StatusOr<ModelSpec> ParseHfConfigText(const std::string& text, const std::string& source,
                                      const std::string& name);

// The architectures ParseHfConfig understands.
std::vector<std::string> SupportedArchitectures();

}  // namespace shardwise
