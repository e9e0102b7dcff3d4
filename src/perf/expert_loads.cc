#include "shardwise/perf/expert_loads.h"

#include <fmt/format.h>

#include <cmath>

#include "shardwise/common/json_fields.h"

namespace shardwise {
namespace {

// Most MoE layers a loads file may list (the largest models have about a hundred).
constexpr size_t kMaxLayers = 4096;

StatusOr<std::vector<double>> ParseLayer(const nlohmann::json& json, const std::string& where,
                                         int64_t experts) {
  if (!json.is_array() || json.size() != static_cast<size_t>(experts)) {
    return Error(fmt::format("{}: expected an array of the {} routed experts' loads, got {}", where,
                             experts, Excerpt(json)));
  }
  std::vector<double> load;
  load.reserve(json.size());
  double total = 0;
  for (const nlohmann::json& v : json) {
    if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0) {
      return Error(
          fmt::format("{}: every load must be a finite number >= 0, got {}", where, Excerpt(v)));
    }
    load.push_back(v.get<double>());
    total += load.back();
  }
  if (!(total > 0)) return Error(fmt::format("{}: every load is 0", where));
  return load;
}

}  // namespace

StatusOr<std::vector<std::vector<double>>> ParseExpertLoads(const nlohmann::json& json,
                                                            const std::string& source,
                                                            int64_t experts) {
  if (experts < 1) return Error(fmt::format("{}: the model has no routed experts", source));
  std::vector<std::vector<double>> layers;
  if (json.is_array() && !json.empty() && json.front().is_array()) {
    if (json.size() > kMaxLayers) {
      return Error(fmt::format("{}: {} layers; at most {}", source, json.size(), kMaxLayers));
    }
    for (size_t i = 0; i < json.size(); ++i) {
      SW_ASSIGN_OR_RETURN(std::vector<double> layer,
                          ParseLayer(json[i], fmt::format("{}, layer {}", source, i), experts));
      layers.push_back(std::move(layer));
    }
    return layers;
  }
  SW_ASSIGN_OR_RETURN(std::vector<double> layer, ParseLayer(json, source, experts));
  layers.push_back(std::move(layer));
  return layers;
}

StatusOr<std::vector<std::vector<double>>> LoadExpertLoads(const std::string& path,
                                                           int64_t experts) {
  SW_ASSIGN_OR_RETURN(nlohmann::json json, ReadJsonFile(path));
  return ParseExpertLoads(json, path, experts);
}

}  // namespace shardwise
