#include "quantization.h"

#include <fmt/format.h>

#include <optional>
#include <string>
#include <string_view>

namespace shardwise::model_internal {
namespace {

constexpr std::string_view kKnownMethods =
    "fp8, mxfp4, compressed-tensors, awq, gptq, and NVFP4 or FP8 from a ModelOpt "
    "hf_quant_config.json";

// The module a quantization exclusion names, judged by the Hugging Face module names in it
// ("lm_head", "model.layers.3.self_attn", "re:.*shared_experts.*", "model.layers.0.mlp.gate").
std::optional<WeightModule> ExcludedModule(std::string_view name) {
  auto has = [&](std::string_view part) { return name.find(part) != std::string_view::npos; };
  if (has("lm_head")) return WeightModule::kLmHead;
  if (has("embed")) return WeightModule::kEmbedding;
  if (has("shared_expert")) return WeightModule::kSharedExperts;
  if (has("attn") || has("mixer")) return WeightModule::kMixer;
  if (has("router") || has("correction_bias") || name == "gate" || name.ends_with(".gate")) {
    return WeightModule::kRouter;
  }
  if (has("experts")) return WeightModule::kRoutedExperts;
  if (has("mlp")) return WeightModule::kDenseFfn;
  return std::nullopt;  // names no module we count separately (e.g. a norm): no effect
}

// The layers' linear modules (mixers, FFNs, experts) in `quantised` except those the exclusion
// list names; embeddings, routers, LM head and norms stay `unquantised`.
StatusOr<WeightFormats> AllLinear(const JsonObject& q, const char* exclusions,
                                  WeightFormat quantised, Dtype unquantised) {
  WeightFormats f = WeightFormats::Uniform(unquantised);
  f.mixer = f.dense_ffn = f.routed_experts = f.shared_experts = quantised;
  if (!q.Has(exclusions)) return f;
  const nlohmann::json& list = q.json.at(exclusions);
  if (!list.is_array()) {
    return Error(fmt::format("{}: '{}' must be a list of module names", q.source, exclusions));
  }
  for (const nlohmann::json& entry : list) {
    if (!entry.is_string()) {
      return Error(fmt::format("{}: '{}' must list module names, got {}", q.source, exclusions,
                               entry.dump()));
    }
    if (auto module = ExcludedModule(entry.get<std::string>())) {
      f.For(*module) = WeightFormat::Of(unquantised);
    }
  }
  return f;
}

// compressed-tensors: config_groups of {targets, weights: {num_bits, type, group_size}}; we read
// the (single) weight scheme and apply it to all linear layers outside "ignore".
StatusOr<WeightFormats> CompressedTensors(const JsonObject& q, Dtype unquantised) {
  if (!q.Has("config_groups") || !q.json.at("config_groups").is_object() ||
      q.json.at("config_groups").size() != 1) {
    return Error(
        fmt::format("{}: compressed-tensors needs exactly one entry in 'config_groups'", q.source));
  }
  const nlohmann::json& group = q.json.at("config_groups").begin().value();
  if (!group.is_object() || !group.contains("weights") || !group.at("weights").is_object()) {
    return Error(fmt::format("{}: config_groups needs a 'weights' scheme", q.source));
  }
  const JsonObject w{group.at("weights"), q.source + ": config_groups weights"};
  SW_ASSIGN_OR_RETURN(int64_t bits, w.Int("num_bits"));
  SW_ASSIGN_OR_RETURN(std::string type, w.String("type"));
  WeightFormat format;
  if (bits == 4 && type == "int") {
    SW_ASSIGN_OR_RETURN(int64_t group_size, w.Int("group_size"));
    format = WeightFormat::Int4Group(group_size);
  } else if (bits == 8 && type == "float") {
    format = WeightFormat::Of(Dtype::kFp8);
  } else {
    return Error(
        fmt::format("{}: {}-bit '{}' weights are not supported; compressed-tensors int4 "
                    "(pack-quantized) and fp8 are",
                    w.source, bits, type));
  }
  return AllLinear(q, "ignore", format, unquantised);
}

StatusOr<WeightFormats> Int4Method(const JsonObject& q, Dtype unquantised) {
  SW_ASSIGN_OR_RETURN(int64_t bits, q.IntOr("bits", 4));
  if (bits != 4) {
    return Error(fmt::format("{}: only 4-bit AWQ/GPTQ weights are supported, got bits = {}",
                             q.source, bits));
  }
  SW_ASSIGN_OR_RETURN(int64_t group_size, q.IntOr("group_size", 128));
  if (group_size == 0) return Error(fmt::format("{}: 'group_size' must be positive", q.source));
  // AWQ and GPTQ leave the LM head, embeddings and routers unquantised.
  return AllLinear(q, "modules_to_not_convert", WeightFormat::Int4Group(group_size), unquantised);
}

StatusOr<WeightFormats> FromQuantAlgo(const JsonObject& q, const std::string& algo,
                                      Dtype unquantised) {
  WeightFormat format;
  if (algo == "NVFP4") {
    format = WeightFormat::Of(Dtype::kFp4);
  } else if (algo == "FP8") {
    format = WeightFormat::Of(Dtype::kFp8);
  } else {
    return Error(
        fmt::format("{}: quant_algo '{}' is not supported; supported: NVFP4, FP8", q.source, algo));
  }
  return AllLinear(q, "exclude_modules", format, unquantised);
}

}  // namespace

StatusOr<WeightFormats> ReadQuantization(const JsonObject& c, Dtype unquantised,
                                         const nlohmann::json* hf_quant_config) {
  if (hf_quant_config != nullptr) {
    const std::string source = "hf_quant_config.json";
    if (!hf_quant_config->is_object() || !hf_quant_config->contains("quantization") ||
        !hf_quant_config->at("quantization").is_object()) {
      return Error(source + ": expected an object with a 'quantization' object (ModelOpt export)");
    }
    const JsonObject q{hf_quant_config->at("quantization"), source + ": quantization"};
    SW_ASSIGN_OR_RETURN(std::string algo, q.String("quant_algo"));
    return FromQuantAlgo(q, algo, unquantised);
  }
  if (!c.Has("quantization_config")) return WeightFormats::Uniform(unquantised);
  const nlohmann::json& qc = c.json.at("quantization_config");
  if (!qc.is_object()) {
    return Error(fmt::format("{}: 'quantization_config' must be an object", c.source));
  }
  const JsonObject q{qc, c.source + ": quantization_config"};
  SW_ASSIGN_OR_RETURN(std::string method, q.String("quant_method"));
  if (method == "fp8") {
    // Block-wise fp8 (DeepSeek-V3, MiniMax-M2: 128 x 128 blocks with one fp32 scale each,
    // < 0.03% extra); routers and LM head stay bf16 ("modules_to_not_convert").
    return AllLinear(q, "modules_to_not_convert", WeightFormat::Of(Dtype::kFp8), unquantised);
  }
  if (method == "mxfp4") {
    // gpt-oss: only the routed experts are mxfp4 (its modules_to_not_convert lists the rest).
    WeightFormats f = WeightFormats::Uniform(unquantised);
    f.routed_experts = WeightFormat::Of(Dtype::kMxfp4);
    return f;
  }
  if (method == "compressed-tensors") return CompressedTensors(q, unquantised);
  if (method == "awq" || method == "gptq") return Int4Method(q, unquantised);
  if (method == "modelopt") {
    SW_ASSIGN_OR_RETURN(std::string algo, q.String("quant_algo"));
    return FromQuantAlgo(q, algo, unquantised);
  }
  return Error(
      fmt::format("{}: quantization method '{}' is not supported; supported: {} (or "
                  "delete quantization_config to size the model unquantised)",
                  q.source, method, kKnownMethods));
}

}  // namespace shardwise::model_internal
