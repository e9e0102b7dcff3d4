#include "shardwise/api/recommend.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <tuple>

#include "shardwise/common/format.h"

namespace shardwise::api {
namespace {

constexpr size_t kMaxClusters = 8;

Status CheckRequest(const RecommendRequest& r) {
  if (r.clusters.empty() || r.clusters.size() > kMaxClusters) {
    return FieldError("cluster", fmt::format("`cluster` names {} clusters; compare 1 to {} at once",
                                             r.clusters.size(), kMaxClusters));
  }
  if (!r.slo.max_ttft_ms || !r.slo.max_tpot_ms) {
    return FieldError(r.slo.max_ttft_ms ? "max_tpot_ms" : "max_ttft_ms",
                      "recommend needs both SLOs: `max_ttft_ms` and `max_tpot_ms` (e.g. 1000 and "
                      "50)");
  }
  if (r.rate != 0) SW_RETURN_IF_ERROR(CheckRate(r.rate));  // 0: find the most
  if (r.max_gpus < 1 || r.max_gpus > 100'000) {
    return FieldError("max_gpus", "`max_gpus` must be between 1 and 100,000");
  }
  if (r.requests != 0 && (r.requests < 50 || r.requests > 1'000'000)) {
    return FieldError("requests", "`requests` must be between 50 and 1,000,000");
  }
  return Status();
}

// No layout meets the SLOs even unloaded: which limit binds, and by how much.
// `more` names what to raise for more GPUs (`max_gpus`, or the clusters' size when it bound).
Status NoneMeetsUnloaded(const Recommendation& res, const Slo& slo, const std::string& what,
                         const std::string& more) {
  if (!std::isfinite(res.best_unloaded_ttft_s)) {
    return FailedPrecondition(what + fmt::format("; no layout of these GPUs holds the model and "
                                                 "one request; raise {} or use larger GPUs",
                                                 more),
                              "max_gpus");
  }
  std::string binds;
  std::string relax;  // every SLO that binds, as its flag
  const char* field = "max_ttft_ms";
  if (res.best_unloaded_ttft_s <= slo.max_ttft_s && res.best_unloaded_tpot_s <= slo.max_tpot_s) {
    return FailedPrecondition(
        what +
            "; the fastest layouts meet the SLOs unloaded, so the GPUs allowed cannot keep "
            "up with the rate: raise " +
            more + " or lower the rate",
        "max_gpus");
  }
  for (const auto& [name, best_s, limit_s, f] :
       {std::tuple{"TTFT", res.best_unloaded_ttft_s, slo.max_ttft_s, "max_ttft_ms"},
        std::tuple{"TPOT", res.best_unloaded_tpot_s, slo.max_tpot_s, "max_tpot_ms"}}) {
    if (best_s <= limit_s) continue;
    if (binds.empty()) field = f;
    relax += fmt::format("{}`{}`", relax.empty() ? "" : " and ", f);
    binds += fmt::format(
        "{}{} binds: the fastest layout's unloaded {} is {} against the SLO's {} "
        "({:.1f}x over)",
        binds.empty() ? "" : "; ", name, name, FormatSeconds(best_s), FormatSeconds(limit_s),
        best_s / limit_s);
  }
  return FailedPrecondition(fmt::format("{}; {}; relax {} or use faster GPUs", what, binds, relax),
                            field);
}

// Why nothing was found, with the closest candidate's figures.
Status NoneServes(const RecommendReport& rep, const RecommendRequest& r) {
  const Recommendation& res = rep.result;
  const RecommendCandidate* closest = nullptr;
  double worst = std::numeric_limits<double>::infinity();
  const Slo& slo = rep.request.plan.slo;
  for (const RecommendCandidate& c : res.tried) {
    if (!c.point) continue;
    const double ratio =
        std::max(c.point->ttft.at_slo_s / slo.max_ttft_s, c.point->tpot.at_slo_s / slo.max_tpot_s);
    if (ratio < worst) {
      worst = ratio;
      closest = &c;
    }
  }
  // The largest deployment tried: `max_gpus`, or the GPUs every cluster given was sized to.
  int64_t most = 0;
  bool all_sized = true;
  for (const NamedCluster& c : rep.clusters) {
    all_sized = all_sized && c.gpus_available.has_value();
    most = std::max(most, c.gpus_available.value_or(0));
  }
  const int64_t cap = all_sized ? std::min(r.max_gpus, most) : r.max_gpus;
  // What to raise: the GPUs the clusters were given when they, not `max_gpus`, bound.
  const bool clusters_bind = all_sized && most < r.max_gpus;
  const char* more = clusters_bind ? "the cluster's `nodes` or `gpus`" : "`max_gpus`";
  const std::string what =
      r.rate > 0 ? fmt::format(
                       "no deployment of up to {} GPUs serves {:g} requests/s within the "
                       "SLOs",
                       cap, r.rate)
                 : std::string("no deployment of these clusters meets the SLOs at any load");
  if (closest == nullptr) return NoneMeetsUnloaded(res, slo, what, more);
  const Slo& s = slo;
  return FailedPrecondition(
      fmt::format(
          "{}: the closest, {} GPUs as {}{}, has {} TTFT {} (SLO {}) and TPOT {} (SLO "
          "{}); raise {} or relax the SLOs",
          what, closest->deployment.gpus(), closest->deployment.ToString(),
          closest->point->overloaded ? " (it falls behind the rate, its queue growing)" : "",
          s.PercentileName(), FormatSeconds(closest->point->ttft.at_slo_s),
          FormatSeconds(s.max_ttft_s), FormatSeconds(closest->point->tpot.at_slo_s),
          FormatSeconds(s.max_tpot_s), more),
      clusters_bind ? "nodes" : "max_gpus");
}

// Where the best's stated bands reach past an SLO at a rate: the first-ranked candidate tried
// that holds the SLOs across its own.
std::optional<size_t> HoldsAcrossBands(const RecommendReport& rep) {
  const shardwise::RecommendRequest& req = rep.request;
  if (rep.result.best->reach.holds || req.rate_per_s <= 0) return std::nullopt;
  std::optional<size_t> held;
  for (size_t i = 0; i < rep.result.tried.size(); ++i) {
    const RecommendCandidate& c = rep.result.tried[i];
    if (!c.meets || !c.reach.holds) continue;
    const Deployment* first = held ? &rep.result.tried[*held].deployment : nullptr;
    if (!first || RanksBefore(req.objective, c.deployment.gpus(), c.deployment.UsdPerHour(),
                              first->gpus(), first->UsdPerHour())) {
      held = i;
    }
  }
  return held;
}

}  // namespace

StatusOr<RecommendReport> Recommend(const Catalog& catalog, const RecommendRequest& r) {
  SW_RETURN_IF_ERROR(CheckRequest(r));
  RecommendReport rep;
  SW_ASSIGN_OR_RETURN(rep.model, catalog.Model(r.model));
  for (const ClusterRef& ref : r.clusters) {
    if (ref.name.empty()) {
      return FieldError("cluster",
                        "`cluster` has an empty name; separate clusters with single "
                        "commas");
    }
    const bool repeated = std::any_of(rep.clusters.begin(), rep.clusters.end(),
                                      [&](const NamedCluster& c) { return c.name == ref.name; });
    if (repeated) {
      return FieldError("cluster",
                        fmt::format("`cluster` names {} twice; name each cluster once", ref.name));
    }
    std::string note;
    SW_ASSIGN_OR_RETURN(ClusterSpec node, catalog.Cluster(ref, &note));
    if (!note.empty()) rep.notes.push_back(note);
    NamedCluster named{ref.name, std::move(node), std::nullopt};
    // Sized for a rate, the deployment stays within the GPUs the cluster was given.
    if (r.rate > 0 && (ref.nodes || ref.gpus)) named.gpus_available = named.node.num_gpus;
    rep.clusters.push_back(std::move(named));
  }
  SW_ASSIGN_OR_RETURN(const LengthSpread spread, ResolveLengthSpread(r.lengths));
  SW_ASSIGN_OR_RETURN(rep.options, ResolveServingOptions(catalog, rep.model, r.serving,
                                                         DrawnLengths(r.isl, r.osl, spread)));
  shardwise::RecommendRequest& req = rep.request;
  req.plan.perf = rep.options.perf;
  req.plan.search_ep = rep.options.search_ep;
  req.plan.max_batch = rep.options.max_batch;
  req.plan.workload.prompt_tokens = r.isl;
  req.plan.workload.output_tokens = r.osl;
  req.plan.load.lengths = spread;
  req.plan.top = 3;
  SW_ASSIGN_OR_RETURN(req.plan.slo, ResolveSlo(r.slo));
  SW_ASSIGN_OR_RETURN(req.objective, ParseRecommendObjective(r.objective));
  req.rate_per_s = r.rate;
  req.max_gpus = r.max_gpus;
  req.requests = r.requests;
  req.seed = r.seed;
  req.disaggregated = r.disaggregated;
  for (const NamedCluster& c : rep.clusters) {
    for (std::string& note : FormatNotes(c.node.gpu, req.plan.perf)) {
      rep.notes.push_back(std::move(note));
    }
  }
  if (std::string cp = UnsearchedContextParallelNote(req.plan, req.max_gpus); !cp.empty()) {
    rep.notes.push_back(std::move(cp));
  }
  const auto start = std::chrono::steady_clock::now();
  SW_ASSIGN_OR_RETURN(rep.result, shardwise::Recommend(rep.model, rep.clusters, req));
  rep.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!rep.result.best) return NoneServes(rep, r);
  const RecommendCandidate& best = *rep.result.best;
  const NamedCluster* named = &rep.clusters.front();
  for (const NamedCluster& c : rep.clusters) {
    if (c.name == best.cluster) named = &c;
  }
  ClusterRef ref = RefOf(named->name, best.deployment.decode().cluster);
  for (const ClusterRef& given : r.clusters) {
    if (given.name != named->name) continue;
    ref.profile = given.profile;
    ref.usd_per_gpu_hour = given.usd_per_gpu_hour;
  }
  SW_ASSIGN_OR_RETURN(rep.estimate,
                      EstimateDeployment(rep.model, best.deployment, rep.request.plan.workload));
  rep.holds_across_bands = HoldsAcrossBands(rep);
  rep.saved = Save("recommend", r.model, ref, r.serving, best.deployment, r.isl, r.osl);
  rep.saved.lengths = r.lengths;
  rep.saved.slo = r.slo;
  if (r.rate > 0) {
    rep.saved.rate = r.rate;
  } else {
    rep.saved.rate = best.rate_per_s;  // the most load it serves
  }
  if (best.point) rep.saved.in_flight = best.point->concurrency;
  return rep;
}

}  // namespace shardwise::api
