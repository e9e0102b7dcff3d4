#include "shardwise/train/engine.h"

#include <fmt/format.h>

#include <algorithm>

#include "shardwise/catalog/embedded.h"
#include "shardwise/common/json_fields.h"

namespace shardwise::train {

bool TrainEngine::Offers(ScheduleKind kind) const {
  return std::find(schedules.begin(), schedules.end(), kind) != schedules.end();
}

bool TrainEngine::OffersZero(int stage) const {
  return std::find(zero_stages.begin(), zero_stages.end(), stage) != zero_stages.end();
}

namespace {

// Numbers that must carry a source.
constexpr const char* kSourced[] = {
    "attention_fraction",      "hidden_tensors",       "score_tensors",
    "backward_traffic_factor", "grad_bytes_per_param", "optimizer_bytes_per_param",
    "workspace_bytes",         "usable_hbm_fraction",  "overlap_grad_reduce",
    "overlap_param_gather",    "flash_attention",      "sequence_parallel"};

}  // namespace

StatusOr<TrainEngine> ParseTrainEngine(const nlohmann::json& json, const std::string& source) {
  if (!json.is_object()) return Error(fmt::format("{}: expected a JSON object", source));
  const JsonObject o{json, source};
  TrainEngine e;
  SW_ASSIGN_OR_RETURN(e.name, o.String("name"));
  if (o.Has("description")) {
    SW_ASSIGN_OR_RETURN(e.description, o.String("description"));
  }
  if (json.contains("sources") && json.at("sources").is_object()) {
    for (const auto& [key, value] : json.at("sources").items()) {
      if (value.is_string()) e.sources[key] = value.get<std::string>();
    }
  }
  for (const char* key : kSourced) {
    if (!e.sources.contains(key) || e.sources.at(key).empty()) {
      return Error(
          fmt::format("{}: '{}' has no entry in \"sources\"; every engine number needs its "
                      "source",
                      source, key));
    }
  }
  SW_ASSIGN_OR_RETURN(e.flash_attention, o.BoolOr("flash_attention", true));
  SW_ASSIGN_OR_RETURN(e.attention_fraction, o.Number("attention_fraction"));
  SW_ASSIGN_OR_RETURN(e.sequence_parallel, o.BoolOr("sequence_parallel", true));
  SW_ASSIGN_OR_RETURN(e.dropout, o.BoolOr("dropout", false));
  SW_ASSIGN_OR_RETURN(e.hidden_tensors, o.Number("hidden_tensors"));
  SW_ASSIGN_OR_RETURN(e.score_tensors, o.NumberOr("score_tensors", 0.0));
  SW_ASSIGN_OR_RETURN(e.backward_traffic_factor, o.Number("backward_traffic_factor"));
  SW_ASSIGN_OR_RETURN(e.grad_bytes_per_param, o.Number("grad_bytes_per_param"));
  SW_ASSIGN_OR_RETURN(e.optimizer_bytes_per_param, o.Number("optimizer_bytes_per_param"));
  SW_ASSIGN_OR_RETURN(e.overlap_grad_reduce, o.BoolOr("overlap_grad_reduce", false));
  SW_ASSIGN_OR_RETURN(e.overlap_param_gather, o.BoolOr("overlap_param_gather", false));
  SW_ASSIGN_OR_RETURN(e.workspace_bytes, o.Number("workspace_bytes"));
  SW_ASSIGN_OR_RETURN(e.usable_hbm_fraction, o.Number("usable_hbm_fraction"));
  if (e.attention_fraction > 1 || e.usable_hbm_fraction > 1) {
    return Error(
        fmt::format("{}: attention_fraction and usable_hbm_fraction must be at most 1", source));
  }
  if (!json.contains("schedules") || !json.at("schedules").is_array()) {
    return Error(
        fmt::format("{}: 'schedules' must list 1f1b, interleaved and/or zero-bubble", source));
  }
  for (const auto& s : json.at("schedules")) {
    const std::string name = s.is_string() ? s.get<std::string>() : s.dump();
    if (name == "1f1b") {
      e.schedules.push_back(ScheduleKind::k1F1B);
    } else if (name == "interleaved") {
      e.schedules.push_back(ScheduleKind::kInterleaved);
    } else if (name == "zero-bubble") {
      e.schedules.push_back(ScheduleKind::kZeroBubble);
    } else {
      return Error(fmt::format("{}: unknown schedule {}; use 1f1b, interleaved or zero-bubble",
                               source, name));
    }
  }
  if (!json.contains("zero_stages") || !json.at("zero_stages").is_array()) {
    return Error(
        fmt::format("{}: 'zero_stages' must list the ZeRO stages (0-3) it offers", source));
  }
  for (const auto& z : json.at("zero_stages")) {
    if (!z.is_number_integer() || z.get<int>() < 0 || z.get<int>() > 3) {
      return Error(fmt::format("{}: zero_stages entries must be 0, 1, 2 or 3", source));
    }
    e.zero_stages.push_back(z.get<int>());
  }
  if (e.schedules.empty() || e.zero_stages.empty()) {
    return Error(
        fmt::format("{}: an engine needs at least one schedule and one ZeRO stage", source));
  }
  return e;
}

std::vector<std::string> BuiltinTrainEngineNames() { return catalog::NamesIn("training"); }

StatusOr<TrainEngine> LoadTrainEngine(std::string_view name_or_path) {
  std::string source;
  SW_ASSIGN_OR_RETURN(nlohmann::json json,
                      catalog::LoadEntry("training", name_or_path, "training engine",
                                         "see data/training/ for the built-in engines", source));
  return ParseTrainEngine(json, source);
}

}  // namespace shardwise::train
