#include "shardwise/model/config_parser.h"

#include <fmt/format.h>

#include "architecture_readers.h"
#include "quantization.h"
#include "shardwise/common/json_fields.h"
#include "shardwise/common/python_json.h"
#include "shardwise/model/model_limits.h"

namespace shardwise {

using model_internal::ArchitectureTable;
using model_internal::WrapperTable;

std::vector<std::string> SupportedArchitectures() {
  std::vector<std::string> names;
  for (const auto& entry : ArchitectureTable()) names.emplace_back(entry.architecture);
  for (const auto& entry : WrapperTable()) names.emplace_back(entry.architecture);
  return names;
}

namespace {

StatusOr<std::string> ReadArchitecture(const JsonObject& c) {
  if (!c.Has("architectures")) return c.MissingKey("architectures");
  const auto& list = c.json.at("architectures");
  if (!list.is_array() || list.empty() || !list[0].is_string()) {
    return Error(
        fmt::format("{}: 'architectures' must be a list with one architecture name", c.source));
  }
  return list[0].get<std::string>();
}

// The unquantised weight format: torch_dtype (or "dtype", its newer name), else bf16.
StatusOr<Dtype> ReadUnquantisedDtype(const JsonObject& c) {
  for (const char* key : {"torch_dtype", "dtype"}) {
    if (c.Has(key) && c.json.at(key).is_string()) {
      return ParseDtype(c.json.at(key).get<std::string>());
    }
  }
  return Dtype::kBf16;
}

// The language model of a multimodal wrapper: text_config, with the wrapper-level keys that
// describe the whole checkpoint (weight format, quantization, embedding tying) filled in
// where text_config lacks them, and its architecture named.
StatusOr<nlohmann::json> TextConfigOf(const JsonObject& c, const model_internal::WrapperEntry& w) {
  if (!c.Has("text_config") || !c.json.at("text_config").is_object()) {
    return Error(
        fmt::format("{}: '{}' is a multimodal wrapper and needs a 'text_config' object "
                    "holding its language model; pass the full config.json",
                    c.source, w.architecture));
  }
  nlohmann::json text = c.json.at("text_config");
  for (const char* key : {"tie_word_embeddings", "quantization_config", "torch_dtype", "dtype"}) {
    if (!text.contains(key) && c.json.contains(key)) text[key] = c.json.at(key);
  }
  const auto& inner = text.find("architectures");
  if (inner == text.end() || !inner->is_array() || inner->empty()) {
    text["architectures"] = {w.text_architecture};
  }
  return text;
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
                                  const std::string& name, const nlohmann::json* hf_quant_config) {
  if (!raw_config.is_object()) return Error(fmt::format("{}: expected a JSON object", source));
  SW_ASSIGN_OR_RETURN(std::string architecture, ReadArchitecture(JsonObject{raw_config, source}));
  for (const auto& w : WrapperTable()) {
    if (architecture != w.architecture) continue;
    SW_ASSIGN_OR_RETURN(nlohmann::json text, TextConfigOf(JsonObject{raw_config, source}, w));
    const StatusOr<std::string> inner = ReadArchitecture({text, source});
    if (inner.ok() && *inner == architecture) {
      return Error(
          fmt::format("{}: text_config names the wrapper '{}' again", source, architecture));
    }
    SW_ASSIGN_OR_RETURN(ModelSpec spec,
                        ParseHfConfig(text, source + ": text_config", name, hf_quant_config));
    spec.architecture = architecture;
    spec.notes.push_back("language model only (text_config); the vision tower is not modelled");
    return spec;
  }
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
  // Absent: no context limit is known; given, it must be one (0 would skip every length check).
  if (c.Has("max_position_embeddings") && spec.max_position_embeddings < 1) {
    return Error(fmt::format("{}: 'max_position_embeddings' must be positive, got {}", source,
                             spec.max_position_embeddings));
  }
  SW_ASSIGN_OR_RETURN(spec.tie_word_embeddings, c.BoolOr("tie_word_embeddings", false));
  if (c.Has("head_dim")) {
    SW_ASSIGN_OR_RETURN(spec.head_dim, c.Int("head_dim"));
  } else if (spec.hidden_size % spec.num_heads != 0) {
    return Error(
        fmt::format("{}: num_attention_heads ({}) must divide hidden_size ({}) when "
                    "'head_dim' is absent",
                    source, spec.num_heads, spec.hidden_size));
  } else {
    spec.head_dim = spec.hidden_size / spec.num_heads;
  }
  spec.layers.assign(num_layers, LayerSpec{});
  spec.attention = spec.num_kv_heads == spec.num_heads ? AttentionKind::kMha
                   : spec.num_kv_heads == 1            ? AttentionKind::kMqa
                                                       : AttentionKind::kGqa;
  SW_ASSIGN_OR_RETURN(Dtype unquantised, ReadUnquantisedDtype(c));
  SW_ASSIGN_OR_RETURN(spec.native_formats,
                      model_internal::ReadQuantization(c, unquantised, hf_quant_config));
  SW_ASSIGN_OR_RETURN(spec.rms_norm_eps, c.NumberOr("rms_norm_eps", 1e-6));
  SW_ASSIGN_OR_RETURN(spec.rope_theta, c.NumberOr("rope_theta", 10000.0));
  SW_ASSIGN_OR_RETURN(spec.rope_scaling, ReadRopeScaling(c));
  SW_ASSIGN_OR_RETURN(spec.norm_topk_prob, c.BoolOr("norm_topk_prob", false));
  if (architecture == "MixtralForCausalLM")
    spec.norm_topk_prob = true;  // Mixtral always renormalises

  SW_RETURN_IF_ERROR(entry->read(c, spec));
  SW_RETURN_IF_ERROR(CheckModelLimits(spec, source));
  SW_RETURN_IF_ERROR(Validate(spec, source));
  // The format most of the weights are in: the routed experts of a MoE, else the dense FFNs.
  spec.native_dtype = spec.is_moe() ? spec.native_formats.routed_experts.dtype
                                    : spec.native_formats.dense_ffn.dtype;
  return spec;
}

StatusOr<ModelSpec> ParseHfConfigText(const std::string& text, const std::string& source,
                                      const std::string& name) {
  SW_ASSIGN_OR_RETURN(nlohmann::json config, ParseJsonText(QuoteNonFiniteLiterals(text), source));
  return ParseHfConfig(config, source, name);
}

}  // namespace shardwise
