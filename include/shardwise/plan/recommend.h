// Recommend: the fewest GPUs (or the lowest $ per million output tokens) that serve a request
// rate within SLOs at a percentile, across clusters of several GPU types. It searches every
// aggregated replica layout with the replica count its capacity needs, and every prefill/decode
// split (xPyD) of the best workers of each pool, smallest analytic size first, and verifies each
// with the steady-state serving simulation (sim/serving.h) at the rate, adding replicas or
// workers until it holds; a size that cannot beat the best verified answer is never simulated.
// Without a rate, the most load each of a cluster's leading deployments serves within the SLOs.
// Pure; single-threaded.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "shardwise/common/status.h"
#include "shardwise/deploy/deployment.h"
#include "shardwise/hw/cluster.h"
#include "shardwise/model/model_spec.h"
#include "shardwise/plan/load.h"
#include "shardwise/plan/planner.h"
#include "shardwise/sim/bands.h"

namespace shardwise {

enum class RecommendObjective { kGpus, kCost };
StatusOr<RecommendObjective> ParseRecommendObjective(std::string_view text);

struct RecommendRequest {
  PlanRequest plan;  // lengths (workload), formats and engine (perf), batch cap, SLOs, EP search
  RecommendObjective objective = RecommendObjective::kGpus;
  double rate_per_s = 0;   // 0: the most load a cluster serves
  int64_t max_gpus = 256;  // with a rate: the largest deployment tried
  int64_t requests = 0;    // per simulation; 0: as many as the steady state needs
  uint64_t seed = 1;
  bool disaggregated = true;  // also search prefill/decode splits
};

// A cluster to search: a catalog name and its node type (the entry as the catalog has it; the
// search scales it to the GPUs a deployment needs).
struct NamedCluster {
  std::string name;
  ClusterSpec node;
  // The GPUs the user has of it (its nodes or GPUs given): a deployment sized for a rate on it
  // stays within them. Unset: as many as `max_gpus`.
  std::optional<int64_t> gpus_available;
};

// How high an operating point's latencies at the SLO percentile reach within their stated bands
// (sim/bands.h): each the percentile scaled by its band's high over its mean (the band is stated
// around the mean), and whether both stay within the SLOs there.
struct SloReach {
  double ttft_s = 0;
  double tpot_s = 0;
  bool holds = false;
};
SloReach ReachWithinBands(const OperatingPoint& point, const LoadBands& bands, const Slo& slo);

struct RecommendCandidate {
  std::string cluster;  // its NamedCluster's name
  Deployment deployment;
  double capacity_requests_per_s = 0;   // analytic, at the largest batch
  double rate_per_s = 0;                // simulated at
  std::optional<OperatingPoint> point;  // the simulated operating point
  // With a point: its latencies' stated bands at that load (an open loop's, sim/bands.h) and
  // how high the SLO's percentile reaches within them.
  std::optional<LoadBands> bands;
  SloReach reach;
  bool meets = false;
  std::string note;  // why it was kept or not
};

struct Recommendation {
  std::vector<RecommendCandidate> tried;  // every simulated candidate, in order
  std::optional<RecommendCandidate> best;
  // The clusters none of whose candidates was simulated, and why: (cluster, reason).
  std::vector<std::pair<std::string, std::string>> unsimulated;
  int64_t simulations = 0;
  // The lowest unloaded TTFT and TPOT of any aggregated layout that fits (infinite: none fits),
  // so an SLO no layout meets even unloaded says which limit binds and by how much.
  double best_unloaded_ttft_s = std::numeric_limits<double>::infinity();
  double best_unloaded_tpot_s = std::numeric_limits<double>::infinity();
};

// Whether a deployment of `gpus_a` GPUs at `usd_a` an hour ranks before one of `gpus_b` at
// `usd_b` under `objective`: fewer GPUs, then cheaper; or cheaper.
bool RanksBefore(RecommendObjective objective, int64_t gpus_a, double usd_a, int64_t gpus_b,
                 double usd_b);

StatusOr<Recommendation> Recommend(const ModelSpec& model, std::span<const NamedCluster> clusters,
                                   const RecommendRequest& request);

}  // namespace shardwise
