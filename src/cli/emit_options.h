// plan's --emit ENGINE, --emit-dir DIR and --emit-rank N: turn a ranked layout into the
// engine's launch files (emit/), printed or written into a directory.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "shardwise/common/status.h"
#include "shardwise/hw/cluster.h"
#include "shardwise/model/model_spec.h"
#include "shardwise/perf/options.h"
#include "shardwise/perf/step.h"

namespace shardwise::cli {

struct EmitOptions {
  std::string engine;   // empty: emit nothing
  std::string dir;      // empty: print to stdout
  int rank = 1;         // which ranked layout (1 = the best)
  bool force = false;   // replace files that are not shardwise's
  bool disagg = false;  // dynamo: separate prefill and decode workers

  void AddTo(CLI::App* sub);
  // Checks the engine name and rank, and that --emit-dir would not replace a user's file
  // (unless `force`), before any work.
  Status Validate(bool force) const;
  // Emits the launch files for `e`; `model_arg` is what the engine loads; `prefill` is the
  // prefill workers' estimate with --emit-disagg. Returns their JSON ({engine, version,
  // layout, prefill_layout, files: [{name, text}]}) and, in text mode, prints or writes them.
  StatusOr<nlohmann::json> Emit(const ModelSpec& model, const std::string& model_arg,
                                const ClusterSpec& cluster, const PerfOptions& perf,
                                const StepEstimate& e, const StepEstimate* prefill,
                                bool print) const;
};

}  // namespace shardwise::cli
