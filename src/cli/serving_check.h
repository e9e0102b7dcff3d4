// Serve a fixed load with one deployment in the discrete-event simulator and read its latency
// percentiles: the check `recommend` runs on every candidate, so an SLO at p99 is judged with
// queueing, not from an unloaded step time.
#pragma once

#include <cstdint>

#include "shardwise/common/status.h"
#include "shardwise/hw/cluster.h"
#include "shardwise/layout/layout.h"
#include "shardwise/model/model_spec.h"
#include "shardwise/perf/options.h"
#include "shardwise/sim/simulator.h"

namespace shardwise::cli {

struct LoadSpec {
  double rate_per_s = 10;  // Poisson arrivals
  int64_t isl = 1024;
  int64_t osl = 256;
  int64_t requests = 1000;
  uint64_t seed = 1;
  int64_t max_batch = 2048;
};

struct ServeCheck {
  SimResult sim;
  double ttft_s = 0;  // at the percentile
  double tpot_s = 0;
  bool meets = false;  // both within the SLOs
};

// Simulates `layout` (all its replicas) on `cluster` under `load`; `percentile` in (0, 100).
StatusOr<ServeCheck> CheckServing(const ModelSpec& model, const ClusterSpec& cluster,
                                  const Layout& layout, const PerfOptions& perf,
                                  const LoadSpec& load, double percentile, double max_ttft_s,
                                  double max_tpot_s);

}  // namespace shardwise::cli
