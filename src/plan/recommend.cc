#include "shardwise/plan/recommend.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "shardwise/common/suggest.h"
#include "shardwise/deploy/estimate.h"
#include "shardwise/plan/disagg_planner.h"

namespace shardwise {
namespace {

// Replica layouts verified per cluster: the best by the GPUs their analytic capacity needs.
constexpr size_t kAggregatedLayouts = 8;
// Workers kept per pool for the splits, and splits verified per cluster.
constexpr size_t kPoolWorkers = 3;
constexpr size_t kSplits = 6;
// Workers a disaggregated candidate may grow by before it is given up.
constexpr int kMaxGrowthSteps = 8;
// Rate bisections of the most-load search: within 1% of the range.
constexpr int kBisections = 7;
// The largest replica or worker the search builds.
constexpr int64_t kMaxInstanceGpus = 512;

// The cluster of `node`'s type with at least `gpus` GPUs.
StatusOr<ClusterSpec> Sized(const ClusterSpec& node, int64_t gpus) {
  if (gpus <= node.num_gpus) return WithGpus(node, gpus);
  const int64_t per_node = node.GpusPerNode();
  return WithNodes(node, (gpus + per_node - 1) / per_node);
}

// A deployment under consideration before it is simulated.
struct Candidate {
  const NamedCluster* cluster = nullptr;
  // Aggregated: one replica of `replica` (the layout with dp of one replica); disaggregated:
  // prefill and decode workers.
  Layout replica;
  EpSetting ep;
  const PoolWorker* prefill = nullptr;
  const PoolWorker* decode = nullptr;
  int64_t count = 1;  // replicas, or prefill workers x
  int64_t decode_count = 1;
  double capacity_per_unit = 0;  // requests/s of one replica (aggregated)
  double usd_per_gpu_hour = 0;

  bool Disaggregated() const { return prefill != nullptr; }
  int64_t Gpus() const {
    return Disaggregated() ? count * prefill->layout.gpus() + decode_count * decode->layout.gpus()
                           : count * replica.gpus();
  }
  double UsdPerHour() const { return static_cast<double>(Gpus()) * usd_per_gpu_hour; }
};

struct Search {
  const ModelSpec& model;
  const RecommendRequest& req;
  Recommendation& out;

  // The largest deployment tried on `cluster`.
  int64_t MaxGpus(const NamedCluster& cluster) const {
    return std::min(req.max_gpus, cluster.gpus_available.value_or(req.max_gpus));
  }

  // Whether `c` would improve on the best answer so far.
  bool CouldBeat(const Candidate& c) const {
    if (c.Gpus() > MaxGpus(*c.cluster)) return false;
    if (!out.best) return true;
    return RanksBefore(req.objective, c.Gpus(), c.UsdPerHour(), out.best->deployment.gpus(),
                       out.best->deployment.UsdPerHour());
  }

  StatusOr<Deployment> Build(const Candidate& c) const {
    SW_ASSIGN_OR_RETURN(ClusterSpec cluster, Sized(c.cluster->node, c.Gpus()));
    PerfOptions perf = req.plan.perf;
    if (!c.Disaggregated()) {
      perf.ep = c.ep;
      Layout layout = c.replica;
      layout.dp *= c.count;
      return Deployment::Aggregated(
          model, EnginePool(PoolRole::kAggregated, layout, 1, cluster, perf, req.plan.max_batch));
    }
    PerfOptions prefill = perf, decode = perf;
    prefill.ep = c.prefill->ep;
    decode.ep = c.decode->ep;
    return Deployment::Disaggregated(model,
                                     EnginePool(PoolRole::kPrefill, c.prefill->layout, c.count,
                                                cluster, prefill, req.plan.max_batch),
                                     EnginePool(PoolRole::kDecode, c.decode->layout, c.decode_count,
                                                cluster, decode, req.plan.max_batch),
                                     KvTransferMode::kAfterPrefill, true);
  }

  // Serves `d` at `rate` under the SLOs; an error only for a bug (a built deployment serves).
  StatusOr<RecommendCandidate> Simulate(const Candidate& c, const Deployment& d,
                                        double rate) const {
    const PlanLoad load{PlanLoad::Kind::kRate, rate, req.plan.load.lengths};
    Scenario s = LoadScenario(req.plan.workload, load, 0, req.plan.slo);
    s.requests = req.requests;
    s.seed = req.seed;
    s.time_what_overload_serves = false;  // a candidate that falls behind is only dropped
    RecommendCandidate out{c.cluster->name, d};
    out.rate_per_s = rate;
    StatusOr<ServingRun> run = Serve(model, d, s);
    if (!run.ok()) {  // a decode pool that cannot hold the load, say
      out.note = run.status().message();
      return out;
    }
    out.capacity_requests_per_s = run->setup.estimate.capacity_requests_per_s;
    out.point = Summarize(*run, d, load);
    out.meets = out.point->meets_slo;
    const Slo& slo = req.plan.slo;
    // Poisson arrivals: an open loop, whose bands do not take the closed loops' spread.
    out.bands = DeploymentBands(d, run->setup.estimate, out.point->out_of_phase, false);
    out.reach = ReachWithinBands(*out.point, *out.bands, slo);
    const bool ttft = out.point->ttft.at_slo_s > slo.max_ttft_s;
    const bool tpot = out.point->tpot.at_slo_s > slo.max_tpot_s;
    out.note = out.meets               ? "meets the SLOs"
               : out.point->overloaded ? "falls behind the rate"
               : ttft && tpot          ? "misses both SLOs at the rate"
               : ttft                  ? "misses the TTFT SLO at the rate"
                                       : "misses the TPOT SLO at the rate";
    return out;
  }

  // Simulates `c` at the rate and keeps the outcome; true when it met the SLOs.
  StatusOr<bool> Try(const Candidate& c, RecommendCandidate* last = nullptr) {
    SW_ASSIGN_OR_RETURN(const Deployment d, Build(c));
    SW_ASSIGN_OR_RETURN(RecommendCandidate r, Simulate(c, d, req.rate_per_s));
    ++out.simulations;
    out.tried.push_back(r);
    if (last) *last = r;
    if (r.meets) out.best = r;
    return r.meets;
  }

  // The fewest replicas of `c`'s layout meeting the SLOs, from its analytic count up (meeting
  // them holds for every larger count): doubling, then bisection.
  Status VerifyAggregated(Candidate c) {
    int64_t lo = c.count - 1;  // known to fail (or below the analytic count)
    int64_t hi = 0;            // known to meet
    for (int64_t n = c.count; hi == 0; n = std::max(n + 1, 2 * n)) {
      c.count = n;
      if (!CouldBeat(c)) return Status();
      SW_ASSIGN_OR_RETURN(const bool meets, Try(c));
      if (meets)
        hi = n;
      else
        lo = n;
    }
    while (hi - lo > 1) {
      c.count = (lo + hi) / 2;
      if (!CouldBeat(c)) return Status();
      SW_ASSIGN_OR_RETURN(const bool meets, Try(c));
      (meets ? hi : lo) = c.count;
    }
    return Status();
  }

  // A split grown worker by worker toward the pool that misses: more prefill workers while
  // TTFT misses (or the prefill pool falls behind), more decode workers while TPOT misses.
  Status VerifyDisaggregated(Candidate c) {
    for (int step = 0; step <= kMaxGrowthSteps && CouldBeat(c); ++step) {
      RecommendCandidate r;
      SW_ASSIGN_OR_RETURN(const bool meets, Try(c, &r));
      if (meets || !r.point) return Status();
      const bool ttft_misses = r.point->ttft.at_slo_s > req.plan.slo.max_ttft_s;
      const bool tpot_misses = r.point->tpot.at_slo_s > req.plan.slo.max_tpot_s;
      if (ttft_misses || (r.point->overloaded && !tpot_misses)) ++c.count;
      if (tpot_misses) ++c.decode_count;
    }
    return Status();
  }

  // The deployment plan picks on the best answer's GPUs at the rate replaces the answer when it
  // meets the SLOs there too (any deployment meeting them on as many GPUs of the cluster is as
  // good to recommend), so plan and recommend answer the same question alike; unless the answer
  // is as fast at the SLOs' percentile in both TTFT and TPOT (a split plan's search does not
  // build, say: Mixtral's 1P x pp2 + 1D x dp4ep4 at TPOT 13.8 ms had given way to plan's
  // 1P x dp2ep2 + 2D x dp2ep2 at 22.6 ms).
  Status AsPlanWould(std::span<const NamedCluster> clusters) {
    const auto named = std::find_if(clusters.begin(), clusters.end(),
                                    [this](const auto& c) { return c.name == out.best->cluster; });
    const int64_t gpus = out.best->deployment.gpus();
    if (named == clusters.end()) return Status();
    SW_ASSIGN_OR_RETURN(const ClusterSpec sized, Sized(named->node, gpus));
    if (sized.num_gpus != gpus) return Status();  // plan would use the whole nodes
    PlanRequest plan = req.plan;
    plan.load = {PlanLoad::Kind::kRate, req.rate_per_s, req.plan.load.lengths};
    plan.allow_unranked = true;
    // A search that fails here leaves the verified answer as it is.
    const StatusOr<PlanResult> searched = Plan(model, sized, plan);
    if (!searched.ok()) return Status();
    const PlanResult& aggregated = *searched;
    std::optional<DisaggPlanEntry> split;
    if (req.disaggregated) {
      StatusOr<std::optional<DisaggPlanEntry>> found = PlanDisaggregated(model, sized, plan);
      if (!found.ok()) return Status();
      split = std::move(*found);
    }
    const StatusOr<PlanAnswer> answer = DecidePlan(model, sized, plan, aggregated, split);
    if (!answer.ok()) return Status();
    const Deployment& pick = answer->winner;
    if (pick.gpus() != gpus || pick.ToString() == out.best->deployment.ToString()) {
      return Status();
    }
    SW_ASSIGN_OR_RETURN(RecommendCandidate r, Simulate(Candidate{&*named}, pick, req.rate_per_s));
    ++out.simulations;
    if (!r.meets) return Status();
    const std::optional<OperatingPoint>& kept = out.best->point;
    if (kept && kept->ttft.at_slo_s <= r.point->ttft.at_slo_s &&
        kept->tpot.at_slo_s <= r.point->tpot.at_slo_s) {
      r.note = "meets the SLOs; plan's pick on these GPUs, slower in TTFT and TPOT";
      out.tried.push_back(r);
      return Status();
    }
    r.note = "meets the SLOs; plan's pick on these GPUs";
    out.tried.push_back(r);
    out.best = r;
    return Status();
  }

  // The replica layouts of `cluster`'s GPUs, each with the replicas its analytic capacity needs.
  void AggregatedCandidates(const NamedCluster& cluster, std::vector<Candidate>& out) const {
    std::vector<Candidate> found;
    const int64_t largest = std::min(MaxGpus(cluster), kMaxInstanceGpus);
    for (int64_t size = 1; size <= largest; size *= 2) {
      const StatusOr<ClusterSpec> sized = Sized(cluster.node, size);
      if (!sized.ok()) break;
      for (const Layout& layout : WorkerLayouts(model, size, req.plan)) {
        for (const EpSetting& ep : EpSettingsToTry(model, layout, req.plan)) {
          PerfOptions perf = req.plan.perf;
          perf.ep = ep;
          const StatusOr<Deployment> d = Deployment::Aggregated(
              model,
              EnginePool(PoolRole::kAggregated, layout, 1, *sized, perf, req.plan.max_batch));
          if (!d.ok()) break;
          const StatusOr<DeploymentEstimate> e = EstimateDeployment(model, *d, req.plan.workload);
          if (!e.ok()) break;  // does not fit: no EP exchange changes memory
          // Unloaded, as simulate times it: its API server's request path and tokenization, then
          // the prefill. It must already meet the SLOs at their mean.
          const double ttft_s =
              e->unloaded_ttft_s + perf.engine.FrontEndS(req.plan.workload.prompt_tokens);
          this->out.best_unloaded_ttft_s = std::min(this->out.best_unloaded_ttft_s, ttft_s);
          this->out.best_unloaded_tpot_s =
              std::min(this->out.best_unloaded_tpot_s, e->prefill().one.tpot_s);
          if (ttft_s > req.plan.slo.max_ttft_s ||
              e->prefill().one.tpot_s > req.plan.slo.max_tpot_s) {
            continue;
          }
          Candidate c{&cluster, layout, ep};
          c.capacity_per_unit = e->capacity_requests_per_s;
          c.count = std::max<int64_t>(
              1, static_cast<int64_t>(std::ceil(req.rate_per_s / c.capacity_per_unit)));
          c.usd_per_gpu_hour = cluster.node.gpu.usd_per_gpu_hour;
          found.push_back(c);
        }
      }
    }
    std::stable_sort(found.begin(), found.end(), [](const Candidate& a, const Candidate& b) {
      return a.Gpus() != b.Gpus() ? a.Gpus() < b.Gpus()
                                  : a.capacity_per_unit / static_cast<double>(a.replica.gpus()) >
                                        b.capacity_per_unit / static_cast<double>(b.replica.gpus());
    });
    if (found.size() > kAggregatedLayouts) found.resize(kAggregatedLayouts);
    out.insert(out.end(), found.begin(), found.end());
  }

  // Whole workers of `w` a pool needs for the rate at its analytic rate, and their GPUs.
  int64_t WorkersForRate(const PoolWorker& w) const {
    const double per_worker = w.requests_per_s_per_gpu * static_cast<double>(w.layout.gpus());
    return std::max<int64_t>(1, static_cast<int64_t>(std::ceil(req.rate_per_s / per_worker)));
  }
  int64_t GpusForRate(const PoolWorker& w) const { return WorkersForRate(w) * w.layout.gpus(); }

  // Keeps the workers whose pool serves the rate on the fewest GPUs (then the higher rate per
  // GPU): at a modest rate a small worker beats a wide one that is fastest per GPU but idles.
  void KeepFewestGpus(std::vector<PoolWorker>& workers) const {
    std::stable_sort(
        workers.begin(), workers.end(), [this](const PoolWorker& a, const PoolWorker& b) {
          const int64_t ga = GpusForRate(a), gb = GpusForRate(b);
          return ga != gb ? ga < gb : a.requests_per_s_per_gpu > b.requests_per_s_per_gpu;
        });
    if (workers.size() > kPoolWorkers) workers.resize(kPoolWorkers);
  }

  // Splits of the prefill and decode workers that serve the rate on the fewest GPUs, x and y
  // from their analytic rates.
  void DisaggregatedCandidates(const NamedCluster& cluster, std::vector<PoolWorker>& prefill,
                               std::vector<PoolWorker>& decode, std::vector<Candidate>& out) const {
    const int64_t largest = std::min(MaxGpus(cluster) / 2, kMaxInstanceGpus);
    for (int64_t size = 1; size <= largest; size *= 2) {
      const StatusOr<ClusterSpec> sized = Sized(cluster.node, 2 * size);
      if (!sized.ok()) break;
      AddPoolWorkers(model, *sized, req.plan, size, prefill, decode);
    }
    KeepFewestGpus(prefill);
    KeepFewestGpus(decode);
    std::vector<Candidate> found;
    for (const PoolWorker& p : prefill) {
      for (const PoolWorker& d : decode) {
        Candidate c{&cluster};
        c.prefill = &p;
        c.decode = &d;
        c.count = WorkersForRate(p);
        c.decode_count = WorkersForRate(d);
        c.usd_per_gpu_hour = cluster.node.gpu.usd_per_gpu_hour;
        found.push_back(c);
      }
    }
    std::stable_sort(found.begin(), found.end(),
                     [](const Candidate& a, const Candidate& b) { return a.Gpus() < b.Gpus(); });
    if (found.size() > kSplits) found.resize(kSplits);
    out.insert(out.end(), found.begin(), found.end());
  }
};

// The most load `d` serves within the SLOs: bisection of the rate up to 1.1x its capacity.
StatusOr<RecommendCandidate> MostLoad(const Search& s, const NamedCluster& cluster,
                                      const Deployment& d, Recommendation& out) {
  SW_ASSIGN_OR_RETURN(const DeploymentEstimate e,
                      EstimateDeployment(s.model, d, s.req.plan.workload));
  Candidate c{&cluster};
  double lo = 0, hi = 1.1 * e.capacity_requests_per_s;
  RecommendCandidate best{cluster.name, d};
  best.capacity_requests_per_s = e.capacity_requests_per_s;
  best.note = "misses the SLOs at any rate tried";
  for (int i = 0; i < kBisections; ++i) {
    const double rate = (lo + hi) / 2;
    SW_ASSIGN_OR_RETURN(RecommendCandidate r, s.Simulate(c, d, rate));
    ++out.simulations;
    if (r.meets) {
      lo = rate;
      best = r;
      best.note = "most load within the SLOs";
    } else {
      hi = rate;
    }
  }
  out.tried.push_back(best);
  return best;
}

// `split` with its workers multiplied by the copies of it that `gpus` hold (itself where one
// does), or nothing where it needs more.
StatusOr<std::optional<Deployment>> FillCluster(const ModelSpec& model, const Deployment& split,
                                                int64_t gpus) {
  if (split.gpus() > gpus) return std::optional<Deployment>();
  const int64_t copies = gpus / split.gpus();
  if (copies == 1) return std::optional<Deployment>(split);
  Pool prefill = split.prefill(), decode = split.decode();
  prefill.workers *= copies;
  decode.workers *= copies;
  SW_ASSIGN_OR_RETURN(
      Deployment whole,
      Deployment::Disaggregated(model, prefill, decode, split.transfer(), split.same_cluster()));
  return std::optional<Deployment>(std::move(whole));
}

}  // namespace

StatusOr<RecommendObjective> ParseRecommendObjective(std::string_view text) {
  if (text == "gpus") return RecommendObjective::kGpus;
  if (text == "cost") return RecommendObjective::kCost;
  return FieldError("objective", UnknownNameMessage("`objective`", text, {"gpus", "cost"},
                                                    "use gpus (the default) or cost"));
}

bool RanksBefore(RecommendObjective objective, int64_t gpus_a, double usd_a, int64_t gpus_b,
                 double usd_b) {
  if (objective == RecommendObjective::kCost) return usd_a < usd_b;
  return gpus_a < gpus_b || (gpus_a == gpus_b && usd_a < usd_b);
}

SloReach ReachWithinBands(const OperatingPoint& point, const LoadBands& bands, const Slo& slo) {
  const auto reach = [](const LatencySummary& s, const BandSpec& band) {
    return s.mean_s > 0 ? s.at_slo_s * LatencyBand(s.mean_s, band).high / s.mean_s : s.at_slo_s;
  };
  SloReach out{reach(point.ttft, bands.ttft), reach(point.tpot, bands.tpot)};
  out.holds = out.ttft_s <= slo.max_ttft_s && out.tpot_s <= slo.max_tpot_s;
  return out;
}

StatusOr<Recommendation> Recommend(const ModelSpec& model, std::span<const NamedCluster> clusters,
                                   const RecommendRequest& req) {
  Recommendation out;
  Search search{model, req, out};
  if (req.rate_per_s <= 0) {
    for (const NamedCluster& cluster : clusters) {
      // The planner's leading layouts and, as plan weighs it beside them, its best split.
      std::vector<Deployment> deployments;
      SW_ASSIGN_OR_RETURN(PlanResult plan, Plan(model, cluster.node, req.plan));
      for (const PlanEntry& entry : plan.ranked) {
        SW_ASSIGN_OR_RETURN(Deployment d, EntryDeployment(model, cluster.node, req.plan, entry));
        deployments.push_back(std::move(d));
      }
      if (req.disaggregated) {
        // A split search that fails (too few GPUs for two pools, say) adds no candidate.
        const StatusOr<std::optional<DisaggPlanEntry>> split =
            PlanDisaggregated(model, cluster.node, req.plan);
        // The most load of the cluster: a split of fewer GPUs runs as the copies of itself the
        // cluster holds, its workers times the copies (a 16-GPU 1P + 1D on 32 GPUs as 2P +
        // 2D); the GPUs left over stay idle, as the answer's GPU count says. (Only a split of
        // all the GPUs had been weighed: 32 H200 served DeepSeek-R1 less than 16 did.)
        if (split.ok() && *split) {
          SW_ASSIGN_OR_RETURN(std::optional<Deployment> whole,
                              FillCluster(model, (*split)->deployment, cluster.node.num_gpus));
          if (whole) deployments.push_back(std::move(*whole));
        }
      }
      for (const Deployment& d : deployments) {
        SW_ASSIGN_OR_RETURN(RecommendCandidate c, MostLoad(search, cluster, d, out));
        // By cost: the cheapest $/Mtok at its most load (ties: more load); else the most load
        // (ties: the cheaper).
        const auto key = [&](const RecommendCandidate& x) {
          const double usd = x.point->usd_per_mtok_output;
          return req.objective == RecommendObjective::kCost ? std::pair{-usd, x.rate_per_s}
                                                            : std::pair{x.rate_per_s, -usd};
        };
        const bool better = c.meets && (!out.best || key(c) > key(*out.best));
        if (better) out.best = c;
      }
    }
    return out;
  }
  // Worker pools live as long as the candidates that point at them.
  std::vector<std::vector<PoolWorker>> pools(2 * clusters.size());
  std::vector<Candidate> candidates;
  for (size_t i = 0; i < clusters.size(); ++i) {
    search.AggregatedCandidates(clusters[i], candidates);
    if (req.disaggregated) {
      search.DisaggregatedCandidates(clusters[i], pools[2 * i], pools[2 * i + 1], candidates);
    }
  }
  const bool by_cost = req.objective == RecommendObjective::kCost;
  std::stable_sort(candidates.begin(), candidates.end(),
                   [by_cost](const Candidate& a, const Candidate& b) {
                     return by_cost ? a.UsdPerHour() < b.UsdPerHour() : a.Gpus() < b.Gpus();
                   });
  for (const Candidate& c : candidates) {
    if (!search.CouldBeat(c)) continue;
    SW_RETURN_IF_ERROR(c.Disaggregated() ? search.VerifyDisaggregated(c)
                                         : search.VerifyAggregated(c));
  }
  if (out.best) SW_RETURN_IF_ERROR(search.AsPlanWould(clusters));
  for (const NamedCluster& cluster : clusters) {
    const auto simulated = [&](const RecommendCandidate& t) { return t.cluster == cluster.name; };
    if (std::any_of(out.tried.begin(), out.tried.end(), simulated)) continue;
    const bool had = std::any_of(candidates.begin(), candidates.end(),
                                 [&](const Candidate& c) { return c.cluster == &cluster; });
    out.unsimulated.emplace_back(
        cluster.name,
        !had      ? "none of its layouts fits and meets the SLOs unloaded"
        : by_cost ? "none of its candidates costs less an hour than the answer"
                  : "none of its candidates needs fewer GPUs than the answer, or as many for less");
  }
  return out;
}

}  // namespace shardwise
