// Plan: every valid layout of a cluster for a workload, ranked by an objective under SLOs at a
// percentile (plan/planner.h), the leading ones simulated at the load by the one serving
// evaluation; the best prefill/decode split of the same GPUs beside it (plan/disagg_planner.h);
// the deployment the verdict picks, which --emit deploys and --json saves. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "shardwise/api/catalog.h"
#include "shardwise/api/deployment_spec.h"
#include "shardwise/api/options.h"
#include "shardwise/api/saved.h"
#include "shardwise/api/simulate.h"
#include "shardwise/deploy/estimate.h"
#include "shardwise/plan/disagg_planner.h"
#include "shardwise/plan/planner.h"
#include "shardwise/sim/bands.h"

namespace shardwise::api {

struct PlanRequest {
  std::string model = "llama-3.1-70b";
  ClusterRef cluster;
  ServingOverrides serving;
  int64_t isl = 1024;
  int64_t osl = 256;
  LengthSpreadRequest lengths;  // how they spread where the load is simulated; fixed by default
  std::string objective = "throughput";  // latency, throughput or cost
  SloRequest slo;
  std::optional<int64_t> concurrency;  // rank at a closed loop of this many clients
  std::optional<double> rate;          // or at an open loop of this many requests/s
  int top = 5;
  std::string layout;         // evaluate only this layout (its best batch)
  bool disaggregated = true;  // also search prefill/decode splits (xPyD)
};

struct PlanReport {
  ModelSpec model;
  ClusterSpec cluster;
  ServingOptions options;
  shardwise::PlanRequest request;  // as the planner ran it
  PlanResult result;
  std::vector<LoadBands> bands;  // of result.ranked's entries at the load
  bool searched_disaggregated = false;
  std::optional<DisaggPlanEntry> disaggregated;
  DeploymentVerdict verdict;
  Deployment winner;                   // the deployment the verdict picks
  DeploymentEstimate winner_estimate;  // its analytic estimate at the request's lengths
  SavedDeployment saved;               // the winner

  std::vector<std::string> notes;
  double elapsed_s = 0;
};

StatusOr<PlanReport> Plan(const Catalog& catalog, const PlanRequest& request);

// The layout plan ranks first for requests of `lengths`' prompt and output tokens (their means,
// spread as `spread` says) under `slo` (offline): where simulate and price start when no
// deployment is named, so they start from plan's answer.
StatusOr<Layout> PlannersLayout(const ModelSpec& model, const ClusterSpec& cluster,
                                const ServingOptions& options, const Workload& lengths,
                                const LengthSpread& spread, const Slo& slo);

// Plan's leading `top` layouts, best first, for the same question.
StatusOr<std::vector<Layout>> PlannersLayouts(const ModelSpec& model, const ClusterSpec& cluster,
                                              const ServingOptions& options,
                                              const Workload& lengths, const LengthSpread& spread,
                                              const Slo& slo, int top);

// The deployment of a plan to deploy: `which` is "winner" (the verdict's), "aggregated" (ranked
// entry `rank`, 1 = the best) or "disaggregated" (the best split); a rank implies aggregated.
// Errors name `emit_deployment` or `emit_rank`.
StatusOr<Deployment> ChooseDeployment(const PlanReport& report, std::string_view which,
                                      std::optional<int> rank);
// The question that deployment answers, as `report.saved` is the winner's: the plan's model,
// cluster, options, lengths, SLOs and load (offline: the clients it was simulated with), so
// `simulate --deployment` and --emit-benchmark replay the chosen deployment, not the winner.
StatusOr<SavedDeployment> ChosenQuestion(const PlanReport& report, std::string_view which,
                                         std::optional<int> rank);

// `failed`, --emit's refusal of the deployment `which` chose without a rank: where `engine`
// cannot launch that deployment's layout, with the rank of the best ranked aggregated layout it
// can launch named; unchanged where the layout is not what failed (a bad `hf_id`, say).
Status WithLaunchableRank(const PlanReport& report, std::string_view engine, std::string_view which,
                          const Status& failed);

}  // namespace shardwise::api
