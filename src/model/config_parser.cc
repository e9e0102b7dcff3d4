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

// rope_scaling: {"rope_type" (or "type"): ..., "factor": ..., type-specific keys}; null or
// "default" means plain RoPE.
StatusOr<RopeScaling> ReadRopeScaling(const JsonObject& c) {
  RopeScaling r;
  if (!c.Has("rope_scaling")) return r;
  const nlohmann::json& j = c.json.at("rope_scaling");
  const std::string source = c.source + ": rope_scaling";
  if (!j.is_object()) return Error(fmt::format("{} must be an object or null", source));
  const JsonObject s{j, source};
  const char* type_key = s.Has("rope_type") ? "rope_type" : "type";
  SW_ASSIGN_OR_RETURN(r.type, s.String(type_key));
  if (r.type == "default") r.type.clear();
  if (r.type.empty()) return r;
  if (r.type != "dynamic" || s.Has("factor")) {
    SW_ASSIGN_OR_RETURN(r.factor, s.Number("factor"));
  }
  SW_ASSIGN_OR_RETURN(r.original_max_position_embeddings,
                      s.IntOr("original_max_position_embeddings", 0));
  SW_ASSIGN_OR_RETURN(r.low_freq_factor, s.NumberOr("low_freq_factor", r.low_freq_factor));
  SW_ASSIGN_OR_RETURN(r.high_freq_factor, s.NumberOr("high_freq_factor", r.high_freq_factor));
  SW_ASSIGN_OR_RETURN(r.beta_fast, s.NumberOr("beta_fast", r.beta_fast));
  SW_ASSIGN_OR_RETURN(r.beta_slow, s.NumberOr("beta_slow", r.beta_slow));
  SW_ASSIGN_OR_RETURN(r.mscale, s.NumberOr("mscale", 0.0));
  SW_ASSIGN_OR_RETURN(r.mscale_all_dim, s.NumberOr("mscale_all_dim", 0.0));
  SW_ASSIGN_OR_RETURN(r.attention_factor, s.NumberOr("attention_factor", 0.0));
  SW_ASSIGN_OR_RETURN(r.truncate, s.BoolOr("truncate", true));
  if (r.type == "llama3" && !(r.high_freq_factor > r.low_freq_factor)) {
    return Error(fmt::format("{}: high_freq_factor ({}) must exceed low_freq_factor ({})", source,
                             r.high_freq_factor, r.low_freq_factor));
  }
  return r;
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

StatusOr<ModelSpec> ParseHfConfig(const nlohmann::json& raw_config, const std::string& source,
                                  const std::string& name) {
  if (!raw_config.is_object()) return Error(fmt::format("{}: expected a JSON object", source));
  SW_ASSIGN_OR_RETURN(std::string architecture, ReadArchitecture(JsonObject{raw_config, source}));
  SW_ASSIGN_OR_RETURN(const nlohmann::json config,
                      model_internal::WithStandardKeys(raw_config, architecture, source));
  const JsonObject c{config, source};
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
  SW_ASSIGN_OR_RETURN(spec.rope_scaling, ReadRopeScaling(c));
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
