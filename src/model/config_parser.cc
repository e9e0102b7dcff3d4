#include "shardwise/model/config_parser.h"

#include <fmt/format.h>

#include "architecture_readers.h"
#include "shardwise/common/json_fields.h"
#include "shardwise/model/model_limits.h"

namespace shardwise {

using model_internal::ArchitectureTable;

std::vector<std::string> SupportedArchitectures() {
  std::vector<std::string> names;
  for (const auto& entry : ArchitectureTable()) names.emplace_back(entry.architecture);
  return names;
}

namespace {

StatusOr<std::string> ReadArchitecture(const JsonObject& c) {
  if (!c.Has("architectures")) return c.MissingKey("architectures");
  const auto& list = c.json.at("architectures");
  if (!list.is_array() || list.empty() || !list[0].is_string()) {
    return Error(fmt::format("{}: 'architectures' must be a list with one architecture name",
                             c.source));
  }
  return list[0].get<std::string>();
}

// The published checkpoint's weight format, from quantization_config or torch_dtype.
StatusOr<Dtype> ReadNativeDtype(const JsonObject& c) {
  if (c.Has("quantization_config") && c.json.at("quantization_config").is_object()) {
    const auto& q = c.json.at("quantization_config");
    const auto method_it = q.find("quant_method");
    if (method_it != q.end() && !method_it->is_string()) {
      return Error(fmt::format("{}: quantization_config.quant_method must be a string, got {}",
                               c.source, Excerpt(*method_it)));
    }
    const std::string method = method_it != q.end() ? method_it->get<std::string>() : "";
    if (method == "fp8") return Dtype::kFp8;
    if (method == "mxfp4") return Dtype::kMxfp4;
  }
  if (c.Has("torch_dtype") && c.json.at("torch_dtype").is_string()) {
    return ParseDtype(c.json.at("torch_dtype").get<std::string>());
  }
  return Dtype::kBf16;
}

Status Validate(const ModelSpec& s, const std::string& source) {
  if (s.num_heads % s.num_kv_heads != 0) {
    return Error(fmt::format("{}: num_key_value_heads ({}) must divide num_attention_heads ({})",
                             source, s.num_kv_heads, s.num_heads));
  }
  if (s.is_moe()) {
    if (s.moe.experts_per_token > s.moe.num_experts) {
      return Error(fmt::format("{}: experts per token ({}) exceeds the number of experts ({})",
                               source, s.moe.experts_per_token, s.moe.num_experts));
    }
    if (s.moe.expert_intermediate_size <= 0) {
      return Error(fmt::format("{}: the expert intermediate size must be positive", source));
    }
  }
  const bool needs_dense_ffn = s.num_moe_layers() < s.num_layers();
  if (needs_dense_ffn && s.intermediate_size <= 0) {
    return Error(fmt::format("{}: 'intermediate_size' is required for dense layers", source));
  }
  return Status();
}

}  // namespace

StatusOr<ModelSpec> ParseHfConfig(const nlohmann::json& config, const std::string& source,
                                  const std::string& name) {
  if (!config.is_object()) return Error(fmt::format("{}: expected a JSON object", source));
  const JsonObject c{config, source};
  SW_ASSIGN_OR_RETURN(std::string architecture, ReadArchitecture(c));
  const model_internal::ArchitectureEntry* entry = nullptr;
  for (const auto& e : ArchitectureTable()) {
    if (architecture == e.architecture) entry = &e;
  }
  if (entry == nullptr) {
    return Error(fmt::format("{}: architecture '{}' is not supported; supported: {}", source,
                             architecture, fmt::join(SupportedArchitectures(), ", ")));
  }

  ModelSpec spec;
  spec.name = name;
  spec.architecture = architecture;
  SW_ASSIGN_OR_RETURN(spec.hidden_size, c.Int("hidden_size"));
  SW_ASSIGN_OR_RETURN(spec.num_heads, c.Int("num_attention_heads"));
  SW_ASSIGN_OR_RETURN(int64_t num_layers, c.Int("num_hidden_layers", kMaxModelLayers));
  SW_ASSIGN_OR_RETURN(spec.vocab_size, c.Int("vocab_size"));
  SW_ASSIGN_OR_RETURN(spec.num_kv_heads, c.IntOr("num_key_value_heads", spec.num_heads));
  if (spec.num_kv_heads == 0) {
    return Error(fmt::format("{}: 'num_key_value_heads' must be positive", source));
  }
  SW_ASSIGN_OR_RETURN(spec.intermediate_size, c.IntOr("intermediate_size", 0));
  SW_ASSIGN_OR_RETURN(spec.max_position_embeddings, c.IntOr("max_position_embeddings", 0));
  SW_ASSIGN_OR_RETURN(spec.tie_word_embeddings, c.BoolOr("tie_word_embeddings", false));
  if (c.Has("head_dim")) {
    SW_ASSIGN_OR_RETURN(spec.head_dim, c.Int("head_dim"));
  } else if (spec.hidden_size % spec.num_heads != 0) {
    return Error(fmt::format("{}: num_attention_heads ({}) must divide hidden_size ({}) when "
                             "'head_dim' is absent",
                             source, spec.num_heads, spec.hidden_size));
  } else {
    spec.head_dim = spec.hidden_size / spec.num_heads;
  }
  spec.layers.assign(num_layers, LayerSpec{});
  spec.attention = spec.num_kv_heads == spec.num_heads ? AttentionKind::kMha
                   : spec.num_kv_heads == 1            ? AttentionKind::kMqa
                                                       : AttentionKind::kGqa;
  SW_ASSIGN_OR_RETURN(spec.native_dtype, ReadNativeDtype(c));
  SW_ASSIGN_OR_RETURN(spec.rms_norm_eps, c.NumberOr("rms_norm_eps", 1e-6));
  SW_ASSIGN_OR_RETURN(spec.rope_theta, c.NumberOr("rope_theta", 10000.0));
  SW_ASSIGN_OR_RETURN(spec.norm_topk_prob, c.BoolOr("norm_topk_prob", false));
  if (architecture == "MixtralForCausalLM") spec.norm_topk_prob = true;  // Mixtral always renormalises

  SW_RETURN_IF_ERROR(entry->read(c, spec));
  SW_RETURN_IF_ERROR(CheckModelLimits(spec, source));
  SW_RETURN_IF_ERROR(Validate(spec, source));
  return spec;
}

StatusOr<ModelSpec> ParseHfConfigText(const std::string& text, const std::string& source,
                                      const std::string& name) {
  SW_ASSIGN_OR_RETURN(nlohmann::json config, ParseJsonText(text, source));
  return ParseHfConfig(config, source, name);
}

}  // namespace shardwise
