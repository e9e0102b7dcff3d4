// Recommend: the fewest GPUs (or the lowest $/Mtok) serving a request rate within SLOs at a
// percentile, across the clusters named (plan/recommend.h), each answer verified by the
// steady-state serving simulation; without a rate, the most load a cluster serves so. Pure;
// thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "shardwise/api/catalog.h"
#include "shardwise/api/options.h"
#include "shardwise/api/saved.h"
#include "shardwise/api/simulate.h"
#include "shardwise/deploy/estimate.h"
#include "shardwise/plan/recommend.h"

namespace shardwise::api {

struct RecommendRequest {
  std::string model = "llama-3.1-70b";
  std::vector<ClusterRef> clusters = {ClusterRef{}};  // GPU types to compare (at most 8)
  ServingOverrides serving;
  int64_t isl = 1024;
  int64_t osl = 256;
  LengthSpreadRequest lengths;  // how they spread in every simulation; fixed by default
  SloRequest slo;               // both limits are required
  double rate = 0;              // requests/s to serve; 0: the most load each cluster serves
  int64_t max_gpus = 256;       // the largest deployment tried
  int64_t requests = 0;         // per simulation; 0: the steady state's
  uint64_t seed = 1;
  std::string objective = "gpus";  // gpus or cost
  bool disaggregated = true;       // also search prefill/decode splits
};

struct RecommendReport {
  ModelSpec model;
  std::vector<NamedCluster> clusters;
  ServingOptions options;
  shardwise::RecommendRequest request;
  Recommendation result;        // result.best is set (an error otherwise)
  DeploymentEstimate estimate;  // the best's analytic estimate at the request's lengths
  SavedDeployment saved;        // the best
  // Where the best's latencies at the SLO percentile reach past an SLO within their stated bands
  // (with a rate), the first-ranked candidate tried that meets the SLOs across its own bands, an
  // index into result.tried (none: the best holds, or no candidate tried does).
  std::optional<size_t> holds_across_bands;

  std::vector<std::string> notes;
  double elapsed_s = 0;
};

StatusOr<RecommendReport> Recommend(const Catalog& catalog, const RecommendRequest& request);

}  // namespace shardwise::api
