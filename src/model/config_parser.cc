#include "shardwise/model/config_parser.h"

#include <fmt/format.h>

#include "architecture_readers.h"
#include "python_json.h"
#include "quantization.h"
#include "shardwise/common/json_fields.h"

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
                                  const std::string& name, const nlohmann::json* hf_quant_config) {
  if (!config.is_object()) return Error(fmt::format("{}: expected a JSON object", source));
  const JsonObject c{config, source};
  SW_ASSIGN_OR_RETURN(std::string architecture, ReadArchitecture(c));
  for (const auto& w : WrapperTable()) {
    if (architecture != w.architecture) continue;
    SW_ASSIGN_OR_RETURN(nlohmann::json text, TextConfigOf(c, w));
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
  SW_ASSIGN_OR_RETURN(int64_t num_layers, c.Int("num_hidden_layers"));
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
    return Error(
        fmt::format("{}: num_attention_heads ({}) must divide hidden_size ({}) when "
                    "'head_dim' is absent",
                    source, spec.num_heads, spec.hidden_size));
  } else {
    spec.head_dim = spec.hidden_size / spec.num_heads;
  }
  if (num_layers > 100000) {
    return Error(
        fmt::format("{}: num_hidden_layers ({}) is implausibly large", source, num_layers));
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
  SW_ASSIGN_OR_RETURN(spec.norm_topk_prob, c.BoolOr("norm_topk_prob", false));
  if (architecture == "MixtralForCausalLM")
    spec.norm_topk_prob = true;  // Mixtral always renormalises

  SW_RETURN_IF_ERROR(entry->read(c, spec));
  SW_RETURN_IF_ERROR(Validate(spec, source));
  // The format most of the weights are in: the routed experts of a MoE, else the dense FFNs.
  spec.native_dtype = spec.is_moe() ? spec.native_formats.routed_experts.dtype
                                    : spec.native_formats.dense_ffn.dtype;
  return spec;
}

StatusOr<ModelSpec> ParseHfConfigText(const std::string& text, const std::string& source,
                                      const std::string& name) {
  SW_ASSIGN_OR_RETURN(nlohmann::json config,
                      ParseJsonText(model_internal::QuoteNonFiniteLiterals(text), source));
  return ParseHfConfig(config, source, name);
}

}  // namespace shardwise
