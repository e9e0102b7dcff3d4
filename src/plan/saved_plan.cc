#include "shardwise/plan/saved_plan.h"

#include <fmt/format.h>

#include "shardwise/common/json_fields.h"

namespace shardwise {

StatusOr<SavedPlanChoice> ParseSavedPlan(const nlohmann::json& plan, const std::string& source) {
  const std::string expected =
      "not a 'shardwise plan --json' output (needs 'model' and a "
      "non-empty 'layouts' list)";
  if (!plan.is_object() || !plan.contains("layouts") || !plan.at("layouts").is_array() ||
      plan.at("layouts").empty()) {
    return Error(fmt::format("{}: {}", source, expected));
  }
  const JsonObject o{plan, source};
  SavedPlanChoice choice;
  SW_ASSIGN_OR_RETURN(choice.model, o.String("model"));
  const nlohmann::json& top = plan.at("layouts").at(0);
  if (!top.is_object()) {
    return Error(fmt::format("{}: layouts[0] must be an object with a 'layout' string, got {}",
                             source, Excerpt(top)));
  }
  SW_ASSIGN_OR_RETURN(choice.layout, (JsonObject{top, source + ": layouts[0]"}.String("layout")));
  return choice;
}

StatusOr<SavedPlanChoice> LoadSavedPlan(const std::string& path) {
  SW_ASSIGN_OR_RETURN(nlohmann::json plan, ReadJsonFile(path, kPlanInput));
  return ParseSavedPlan(plan, path);
}

}  // namespace shardwise
