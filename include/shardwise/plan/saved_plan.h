// Reading back a `shardwise plan --json` output: the model it planned for and its top layout,
// which `shardwise run --plan FILE` executes. Value types; free functions.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "shardwise/common/status.h"

namespace shardwise {

struct SavedPlanChoice {
  std::string model;   // catalog name or config path, as the plan recorded it
  std::string layout;  // the best layout, e.g. "tp4pp2"
};

// The model and first layout of a parsed plan; `source` names it in errors.
StatusOr<SavedPlanChoice> ParseSavedPlan(const nlohmann::json& plan, const std::string& source);

// Reads a plan file under the saved-plan input policy and parses it.
StatusOr<SavedPlanChoice> LoadSavedPlan(const std::string& path);

}  // namespace shardwise
