// What `simulate` runs: an aggregated layout (given, or the planner's best) or a disaggregated
// deployment, with its step tables and the simulator's configuration, and how to describe it.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "disagg_options.h"
#include "shardwise/common/status.h"
#include "shardwise/hw/cluster.h"
#include "shardwise/model/model_spec.h"
#include "shardwise/perf/options.h"
#include "shardwise/perf/uncertainty.h"
#include "shardwise/sim/serving.h"

namespace shardwise::cli {

struct SimSetup {
  std::string name;   // the layout, or the deployment "2P x tp4 + 1D x tp8"
  std::string shape;  // "2 replicas of 4 GPUs", or the pools' clusters
  int64_t gpus = 0;
  SimConfig config;
  const StepTable* table = nullptr;    // the aggregated or prefill pool's
  double capacity_requests_per_s = 0;  // what the deployment serves at most (steady state)
  nlohmann::json deployment_json;      // null when aggregated
  nlohmann::json moe_json;
  std::string link;  // disaggregated: the KV link
  KvTransferMode transfer_mode = KvTransferMode::kAfterPrefill;
  // The relative bands of one prompt's prefill and one decode step (perf/uncertainty.h).
  PhaseUncertainty ttft_band, tpot_band;

  std::unique_ptr<StepTable> aggregated_table;
  std::unique_ptr<DisaggregatedServing> disaggregated;
};

// `layout` empty: the planner's best for `one`'s lengths.
StatusOr<SimSetup> AggregatedSetup(const ModelSpec& model, const ClusterSpec& cluster,
                                   const std::string& layout, const PerfOptions& perf,
                                   const Workload& one, int64_t longest_tokens, int64_t max_batch,
                                   Admission admission);

StatusOr<SimSetup> DisaggregatedSetup(const ModelSpec& model, const DisaggSetup& d,
                                      const PerfOptions& perf, const Workload& one,
                                      int64_t longest_tokens, int64_t max_batch,
                                      Admission admission, const OfferedLoad& offered);

}  // namespace shardwise::cli
