#include "shardwise/api/replay.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace shardwise::api {
namespace {

// The saved lengths' spread where the caller gave none: the saved CV where a length still
// spreads, none where both end fixed (a CV there would spread nothing, an error): replayed at
// fixed lengths, a saved spread's CV is not kept.
void ReplayLengths(const SavedDeployment& saved, const GivenFields& given,
                   LengthSpreadRequest& lengths) {
  if (!given.isl_dist) lengths.isl_dist = saved.lengths.isl_dist;
  if (!given.osl_dist) lengths.osl_dist = saved.lengths.osl_dist;
  if (given.length_cv) return;
  const bool fixed = lengths.isl_dist == "fixed" && lengths.osl_dist == "fixed";
  lengths.length_cv = fixed ? std::nullopt : saved.lengths.length_cv;
}

// The saved SLOs with the caller's own limits and percentile kept.
void ReplaySlo(const SavedDeployment& saved, const GivenFields& given, SloRequest& slo) {
  const SloRequest mine = slo;
  slo = saved.slo;
  if (given.max_ttft) slo.max_ttft_ms = mine.max_ttft_ms;
  if (given.max_tpot) slo.max_tpot_ms = mine.max_tpot_ms;
  if (given.percentile) slo.percentile = mine.percentile;
}

// What every replay takes from the file whole.
template <typename Request>
void ReplayQuestion(const SavedDeployment& saved, Request& r) {
  r.model = saved.model;
  r.cluster = saved.cluster;
  r.serving = saved.serving;
  r.deployment = saved.deployment;
}

}  // namespace

void Replay(const SavedDeployment& saved, const GivenFields& given, SimulateRequest& r) {
  ReplayQuestion(saved, r);
  if (!given.isl) r.workload.isl = saved.isl;
  if (!given.osl) r.workload.osl = saved.osl;
  if (!given.load && r.workload.trace.empty() && !saved.trace.empty()) {
    r.workload.trace = saved.trace;  // the saved run's own arrivals and lengths
  } else if (!given.load && r.workload.trace.empty()) {
    if (saved.rate) r.rate = saved.rate;
    if (saved.offline) r.rate = std::numeric_limits<double>::infinity();
    if (saved.concurrency) r.concurrency = saved.concurrency;
    if (!given.burstiness) r.burstiness = saved.burstiness;
  }
  // The saved request generator: the lengths' spread (any command's), a simulate's seed and
  // router (the other commands save seed 1 and the default router).
  ReplayLengths(saved, given, r.workload.lengths);
  if (!given.seed) r.seed = saved.seed;
  if (!given.router) r.router = saved.router;
  ReplaySlo(saved, given, r.slo);
}

void Replay(const SavedDeployment& saved, const GivenFields& given, PriceRequest& r) {
  ReplayQuestion(saved, r);
  if (!given.isl) r.isl = saved.isl;
  if (!given.osl) r.osl = saved.osl;
  // The saved lengths' spread is the workload's, at any load.
  ReplayLengths(saved, given, r.generator.lengths);
  if (!given.load && !given.max_ttft && !given.max_tpot && !given.percentile) {
    r.rate = saved.rate;
    r.concurrency = saved.concurrency;
    // Priced at the saved load, the arrivals are drawn as the saved run drew them.
    r.generator.burstiness = saved.rate ? saved.burstiness : std::nullopt;
    r.generator.router = saved.router;
    r.seed = saved.seed;
  }
  ReplaySlo(saved, given, r.slo);
}

Status Replay(const SavedDeployment& saved, const GivenFields& given, ExplainRequest& r) {
  ReplayQuestion(saved, r);
  if (!given.isl) r.context = saved.isl;
  if (!given.osl) r.osl = saved.osl;
  ReplayLengths(saved, given, r.lengths);
  // The saved load's requests in flight, shared among the replicas or decode workers.
  const std::optional<double> in_flight =
      saved.concurrency ? std::optional<double>(static_cast<double>(*saved.concurrency))
                        : saved.in_flight;
  if (given.batch || !in_flight) return Status();
  const DeploymentSpec& d = saved.deployment;
  StatusOr<Layout> layout = ParseLayout(d.Disaggregated() ? d.decode_layout : d.layout);
  if (!layout.ok()) return layout.status().WithField("deployment");
  const int64_t holders =
      std::max<int64_t>(1, d.Disaggregated() ? d.decode_workers : layout->Replicas());
  r.batch = std::max<int64_t>(
      1, static_cast<int64_t>(std::ceil(*in_flight / static_cast<double>(holders))));
  return Status();
}

}  // namespace shardwise::api
