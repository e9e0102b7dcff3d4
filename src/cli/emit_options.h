// plan's --emit ENGINE, --emit-deployment winner|aggregated|disaggregated, --emit-rank N and
// --emit-dir DIR: turn the planned deployment (a ranked layout, or the disaggregated prefill and
// decode pools) into the engine's launch files (emit/), printed or written into a directory.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "shardwise/common/status.h"
#include "shardwise/hw/cluster.h"
#include "shardwise/model/model_spec.h"
#include "shardwise/perf/options.h"
#include "shardwise/perf/step.h"
#include "shardwise/plan/disagg_planner.h"
#include "shardwise/plan/planner.h"

namespace shardwise::cli {

// The deployment to emit: one ranked aggregated layout, or the disaggregated one.
struct EmitTarget {
  const StepEstimate* aggregated = nullptr;
  const DisaggPlanEntry* disaggregated = nullptr;
};

struct EmitOptions {
  std::string engine;                 // empty: emit nothing
  std::string deployment = "winner";  // winner, aggregated or disaggregated
  std::string dir;                    // empty: print to stdout
  int rank = 1;                       // which ranked aggregated layout (1 = the best)
  CLI::Option* rank_option = nullptr;
  CLI::Option* deployment_option = nullptr;
  bool force = false;           // replace files that are not shardwise's
  bool removed_disagg = false;  // --emit-disagg, replaced by --emit-deployment (refused)

  void AddTo(CLI::App* sub);
  // Checks the engine name, deployment and rank, and that --emit-dir would not replace a user's
  // file (unless `force`), before any work.
  Status Validate(bool force) const;
  // The deployment --emit-deployment and --emit-rank pick: the winner (the disaggregated one
  // when it wins), unless --emit-rank names an aggregated layout. `disaggregated` is absent when
  // plan found none or did not search (`searched` false).
  StatusOr<EmitTarget> Choose(const std::vector<PlanEntry>& ranked,
                              const std::optional<DisaggPlanEntry>& disaggregated,
                              bool disaggregated_wins, bool searched) const;
  // Emits the launch files of `target`; `model_arg` names what the engine loads. Returns their
  // JSON ({engine, version, deployment, name, pools, files}) and, in text mode, prints or
  // writes them.
  StatusOr<nlohmann::json> Emit(const ModelSpec& model, const std::string& model_arg,
                                const ClusterSpec& cluster, const PerfOptions& perf,
                                const EmitTarget& target, bool print) const;
};

}  // namespace shardwise::cli
