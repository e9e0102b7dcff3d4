// The planner: enumerate every valid layout of a cluster (TP, CP, PP, EP and the data-parallel
// fill), try batch sizes up to what fits, drop what breaks memory or the SLOs, simulate the
// leading layouts at the load (load.h) and rank them by what they do there under the SLOs and
// the objective, and report the Pareto front of throughput per GPU against speed per user, with a
// line per top layout saying why it wins and what bounds it. Pure; single-threaded.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "shardwise/common/status.h"
#include "shardwise/hw/cluster.h"
#include "shardwise/layout/layout.h"
#include "shardwise/model/model_spec.h"
#include "shardwise/perf/options.h"
#include "shardwise/perf/step.h"
#include "shardwise/plan/load.h"

namespace shardwise {

enum class Objective { kLatency, kThroughput, kCost };
StatusOr<Objective> ParseObjective(std::string_view text);
std::string_view ObjectiveName(Objective objective);

// How an operating point ranks under `objective`, larger first: by TPOT at the SLO percentile
// (latency), or by the tokens per GPU the bill is spread over (throughput, cost: at a rate
// every deployment that keeps up bills the offered tokens, not its window's Poisson sample),
// in log-spaced buckets kRankTieFraction wide (points in one bucket tie, and the shorter TPOT
// goes first).
inline constexpr double kRankTieFraction = 0.02;
std::pair<double, double> RankKey(Objective objective, const OperatingPoint& p);
// RankKey in words, for the tables that rank by it.
std::string RankingPhrase(Objective objective);

struct PlanRequest {
  Workload workload;  // prompt and output lengths; the batch is chosen by the planner
  Objective objective = Objective::kThroughput;
  Slo slo;                   // judged at its percentile where the load is simulated
  int64_t max_batch = 2048;  // engine cap on concurrent sequences per attention rank
  int top = 5;
  PerfOptions perf;
  // Also try each EP layout with the DeepEP-class kernels (fp8 dispatch), without and with
  // two-batch overlap, keeping the best; false: every layout runs perf.ep as given.
  bool search_ep = false;
  std::optional<Layout> only_layout;  // evaluate just this layout (its best batch)
  // When no layout fits or meets the SLOs, return the result with `ranked` empty and the reason
  // in PlanResult::unranked instead of failing (plan's disaggregated search may still answer).
  bool allow_unranked = false;
  // The load the leading layouts are simulated at; the SLOs are checked there.
  PlanLoad load;
};

struct PlanEntry {
  StepEstimate estimate;
  EpSetting ep;  // how its MoE layers exchange tokens (the request's unless searched)
  double usd_per_mtok_output = 0;
  double joules_per_output_token = 0;  // its GPUs at rated board power (price/energy.h)
  std::string limited_by;  // what stopped a larger batch: "KV capacity", "SLO", "--max-batch"
  std::string why;         // one line: why this layout, what bounds it
  std::optional<OperatingPoint> at_load;  // simulated at the request's load (ranked entries)
};

struct PlanResult {
  std::vector<PlanEntry> ranked;  // best first, one entry per layout
  std::vector<PlanEntry> pareto;  // non-dominated (tokens/s/user, tokens/s/GPU), fastest user first
  int64_t layouts_considered = 0;  // valid layouts enumerated
  int64_t layouts_fitting = 0;     // of those, fitting in memory at batch 1
  int64_t points_evaluated = 0;    // (layout, batch) pairs estimated
  // With PlanRequest::allow_unranked: why `ranked` is empty (no layout fits, or none meets the
  // SLOs at the load), else OK.
  Status unranked;
  // Leading layouts dropped because they cannot run the load ("dp4pp2: a request of ... needs
  // more KV than a replica holds"): a spread can draw a request one replica cannot hold.
  std::vector<std::string> unserved;
};

// Every layout whose GPUs equal the cluster's and that the model's shape allows, with
// `redundant_experts` copies in each EP group of the layouts with ep > 1. Layouts with cp > 1
// only for long prompts, and only where `engine` serves them (its context_parallel).
std::vector<Layout> EnumerateLayouts(const ModelSpec& model, int64_t gpus, int64_t prompt_tokens,
                                     const EngineProfile& engine, int64_t redundant_experts = 0);
// Why no layout with cp > 1 is ranked for `request` on up to `gpus` GPUs: its prompts are long
// enough to try them and the GPUs could hold one, but its engine serves without context
// parallelism. Empty otherwise, and when the request asks for one layout.
std::string UnsearchedContextParallelNote(const PlanRequest& request, int64_t gpus);

// The EP settings a layout is tried with: the request's own, or, when it searches them, also
// the DeepEP-class kernels (auto per phase, fp8 dispatch) without and with two-batch overlap.
std::vector<EpSetting> EpSettingsToTry(const ModelSpec& model, const Layout& layout,
                                       const PlanRequest& request);

StatusOr<PlanResult> Plan(const ModelSpec& model, const ClusterSpec& cluster,
                          const PlanRequest& request);

// The aggregated deployment of a ranked entry: its layout and EP exchange on the whole cluster,
// with the request's options and engine scheduler.
StatusOr<Deployment> EntryDeployment(const ModelSpec& model, const ClusterSpec& cluster,
                                     const PlanRequest& request, const PlanEntry& entry);

}  // namespace shardwise
