// plan's disaggregated answer: the best prefill/decode deployment (plan/disagg_planner.h) beside
// the best aggregated layout, which one wins under the objective at the load, and why.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "shardwise/plan/disagg_planner.h"
#include "shardwise/plan/planner.h"

namespace shardwise::cli {

struct DeploymentVerdict {
  bool disaggregated_wins = false;
  std::string why;  // one line with both figures
};

// Compares the best aggregated entry with the disaggregated one (absent: aggregated wins) by
// what each does at the load: throughput per GPU, or TPOT for the latency objective.
DeploymentVerdict CompareDeployments(const PlanEntry& aggregated,
                                     const std::optional<DisaggPlanEntry>& disaggregated,
                                     Objective objective);

nlohmann::json DisaggEntryJson(const DisaggPlanEntry& entry);

}  // namespace shardwise::cli
