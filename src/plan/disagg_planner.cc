#include "shardwise/plan/disagg_planner.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

#include "shardwise/common/format.h"
#include "shardwise/common/parallel.h"

namespace shardwise {
namespace {

// Worker layouts kept per pool for pairing (the best by requests per second per GPU).
constexpr size_t kPoolCandidates = 3;
// Splits (pair of worker layouts, xPyD) simulated at the load, best analytic rate first.
constexpr size_t kSimulatedSplits = 6;
// The largest xPyD unit searched: a larger cluster deploys whole copies of the best unit (its
// tokens per GPU are the unit's), so the search and the load simulation, which serves one copy
// (sim/serving.h), do not grow with the GPU count.
constexpr int64_t kSplitUnitGpus = 256;

// Worker sizes: powers of two up to half the cluster (the other half at least for the other pool).
std::vector<int64_t> WorkerSizes(int64_t gpus) {
  std::vector<int64_t> sizes;
  for (int64_t g = 1; 2 * g <= gpus; g *= 2) sizes.push_back(g);
  return sizes;
}

// A split of the cluster's GPUs before it is simulated: x prefill and y decode workers.
struct Split {
  const PoolWorker* prefill = nullptr;
  const PoolWorker* decode = nullptr;
  int64_t x = 0, y = 0;
  double output_tokens_per_s_per_gpu = 0;  // analytic: the slower pool's rate (at most the load's)
  bool carries_load = true;                // its analytic rate holds the load given (if any)
};

// The split as a deployment on the cluster, each pool with its own EP exchange.
StatusOr<Deployment> SplitDeployment(const ModelSpec& model, const ClusterSpec& cluster,
                                     const PlanRequest& req, const Split& s) {
  PerfOptions prefill_perf = req.perf, decode_perf = req.perf;
  prefill_perf.ep = s.prefill->ep;
  decode_perf.ep = s.decode->ep;
  return Deployment::Disaggregated(
      model,
      EnginePool(PoolRole::kPrefill, s.prefill->layout, s.x, cluster, prefill_perf, req.max_batch),
      EnginePool(PoolRole::kDecode, s.decode->layout, s.y, cluster, decode_perf, req.max_batch),
      KvTransferMode::kAfterPrefill, true);
}

// The split's estimate and its simulation at the request's load; no entry when it cannot serve
// the load within the SLOs.
StatusOr<std::optional<DisaggPlanEntry>> AtLoad(const ModelSpec& model, const ClusterSpec& cluster,
                                                const PlanRequest& req, const Split& s) {
  SW_ASSIGN_OR_RETURN(Deployment deployment, SplitDeployment(model, cluster, req, s));
  Workload w = req.workload;
  w.batch = s.decode->estimate.workload.batch;
  const StatusOr<DeploymentEstimate> est =
      EstimateDeployment(model, deployment, w, s.decode->estimate.workload.batch);
  if (!est.ok()) return std::optional<DisaggPlanEntry>();
  DisaggPlanEntry e;
  e.deployment = std::move(deployment);
  e.prefill_ep = s.prefill->ep;
  e.decode_ep = s.decode->ep;
  e.prefill = s.prefill->estimate;
  e.decode = s.decode->estimate;
  e.link = est->link;
  e.transfer = est->transfer;
  e.ttft_s = est->unloaded_ttft_s;
  e.tpot_s = e.decode.tpot_s;
  e.prefill_requests_per_s = est->prefill().requests_per_s;
  e.decode_requests_per_s = est->decode().requests_per_s;
  const double osl = static_cast<double>(req.workload.output_tokens);
  // The slower pool's rate, or the prefill workers' API servers' where they pass fewer prompts.
  const double rate = est->capacity_requests_per_s;
  e.output_tokens_per_s = rate * osl;
  e.output_tokens_per_s_per_gpu = e.output_tokens_per_s / static_cast<double>(e.deployment.gpus());
  // Unloaded, as simulate times a TTFT: the API server's request path and tokenization first.
  if (e.ttft_s + req.perf.engine.FrontEndS(req.workload.prompt_tokens) > req.slo.max_ttft_s) {
    return std::optional<DisaggPlanEntry>();
  }
  // Offline, as the aggregated layouts are (each at its best batch): for latency one request per
  // decode worker; otherwise as many as the split keeps in flight at its analytic rate (Little's
  // law).
  const double offline_clients = req.objective == Objective::kLatency
                                     ? static_cast<double>(s.y)
                                     : std::max(1.0, std::ceil(rate * (e.ttft_s + osl * e.tpot_s)));
  auto point =
      SimulateOperatingPoint(model, e.deployment, req.workload, req.load, offline_clients, req.slo);
  if (!point.ok()) return std::optional<DisaggPlanEntry>();  // the decode pool cannot hold it
  if (!point->meets_slo) return std::optional<DisaggPlanEntry>();
  e.at_load = *point;
  const Pool& pp = e.deployment.prefill();
  const Pool& dp = e.deployment.decode();
  e.why = fmt::format(
      "{}: prefill workers {} ({:.2f} requests/s each at full load, TTFT {}), decode workers {} "
      "at batch {} with no prompt chunks in their steps (TPOT {}); KV {} over {}; simulated at "
      "{} in flight: {} TTFT {}, TPOT {}, {:.0f} tokens/s per GPU",
      e.deployment.ToString(), pp.layout.ToString(),
      est->passed_requests_per_s / static_cast<double>(pp.workers), FormatSeconds(e.prefill.ttft_s),
      dp.layout.ToString(), e.decode.workload.batch, FormatSeconds(e.tpot_s),
      FormatSeconds(est->transfer_s), e.link.name,
      Counted(point->concurrency, "request", "requests"), req.slo.PercentileName(),
      FormatSeconds(point->ttft.at_slo_s), FormatSeconds(point->tpot.at_slo_s),
      point->billed_output_tokens_per_s_per_gpu);
  return std::optional<DisaggPlanEntry>(std::move(e));
}

}  // namespace

StatusOr<std::optional<DisaggPlanEntry>> PlanDisaggregated(const ModelSpec& model,
                                                           const ClusterSpec& cluster,
                                                           const PlanRequest& req) {
  std::vector<PoolWorker> prefill, decode;
  const int64_t unit = std::min(cluster.num_gpus, kSplitUnitGpus);
  const int64_t copies = cluster.num_gpus / unit;
  for (int64_t size : WorkerSizes(unit)) {
    AddPoolWorkers(model, cluster, req, size, prefill, decode);
  }
  KeepBestWorkers(prefill, kPoolCandidates);
  KeepBestWorkers(decode, kPoolCandidates);
  std::vector<Split> splits;
  for (const PoolWorker& p : prefill) {
    for (const PoolWorker& d : decode) {
      const int64_t gp = p.layout.gpus(), gd = d.layout.gpus();
      const double rp = p.requests_per_s_per_gpu * static_cast<double>(gp);
      const double rd = d.requests_per_s_per_gpu * static_cast<double>(gd);
      // xPyD within a unit's GPUs: for each x, the decode workers just below and above the
      // balance x rp = y rd; the cluster holds `copies` of the unit.
      for (int64_t x = 1; x * gp + gd <= unit; ++x) {
        const int64_t most = (unit - x * gp) / gd;
        const double balance = static_cast<double>(x) * rp / rd;
        for (int64_t y : {static_cast<int64_t>(std::floor(balance)),
                          static_cast<int64_t>(std::ceil(balance))}) {
          y = std::clamp<int64_t>(y, 1, most);
          const double rate = std::min(static_cast<double>(x) * rp, static_cast<double>(y) * rd);
          // At a given rate no split bills more than that load: the tokens per GPU are then
          // the load's over the split's GPUs, so among the splits that hold it the fewest GPUs
          // lead (the simulation at the load judges the SLOs). It had led with the most
          // capacity per GPU, and a full node's search missed the 4-GPU split it found on 4.
          const bool at_rate = req.load.kind == PlanLoad::Kind::kRate;
          const double load = req.load.value / static_cast<double>(copies);
          const double served = at_rate ? std::min(rate, load) : rate;
          splits.push_back({&p, &d, x * copies, y * copies,
                            served * static_cast<double>(req.workload.output_tokens) /
                                static_cast<double>(x * gp + y * gd),
                            !at_rate || rate >= load});
        }
      }
    }
  }
  // Best first by the analytic rate, the splits that hold the load before those that cannot
  // (which would fill the simulated leaders and fail there); the load decides among the leaders.
  std::stable_sort(splits.begin(), splits.end(), [](const Split& a, const Split& b) {
    if (a.carries_load != b.carries_load) return a.carries_load;
    return a.output_tokens_per_s_per_gpu > b.output_tokens_per_s_per_gpu;
  });
  // The leading distinct splits (by layouts, counts and EP exchanges), simulated at the load in
  // parallel; the best by the objective, the earlier on a tie.
  std::vector<const Split*> leaders;
  std::set<std::string> distinct;
  for (size_t i = 0; i < splits.size() && leaders.size() < kSimulatedSplits; ++i) {
    const Split& split = splits[i];
    const EpSetting& pe = split.prefill->ep;
    const EpSetting& de = split.decode->ep;
    const std::string key = fmt::format(
        "{}P x {} + {}D x {} {}{}{} {}{}{}", split.x, split.prefill->layout.ToString(), split.y,
        split.decode->layout.ToString(), EpAlgorithmName(pe.algorithm),
        DtypeName(pe.dispatch_dtype), pe.two_batch_overlap, EpAlgorithmName(de.algorithm),
        DtypeName(de.dispatch_dtype), de.two_batch_overlap);
    if (distinct.insert(key).second) leaders.push_back(&split);
  }
  const std::function<StatusOr<std::optional<DisaggPlanEntry>>(size_t)> simulate = [&](size_t i) {
    return AtLoad(model, cluster, req, *leaders[i]);
  };
  std::optional<DisaggPlanEntry> best;
  for (StatusOr<std::optional<DisaggPlanEntry>>& e : ParallelMap(leaders.size(), simulate)) {
    if (!e.ok()) return e.status();
    if (!*e) continue;
    if (!best || RankKey(req.objective, *(*e)->at_load) > RankKey(req.objective, *best->at_load)) {
      best = std::move(**e);
    }
  }
  return best;
}

std::vector<Layout> WorkerLayouts(const ModelSpec& model, int64_t gpus, const PlanRequest& req) {
  std::vector<Layout> out;
  for (const Layout& l : EnumerateLayouts(model, gpus, req.workload.prompt_tokens, req.perf.engine,
                                          req.perf.redundant_experts)) {
    if (l.Replicas() == 1) out.push_back(l);
  }
  return out;
}

void AddPoolWorkers(const ModelSpec& model, const ClusterSpec& cluster, const PlanRequest& req,
                    int64_t size, std::vector<PoolWorker>& prefill,
                    std::vector<PoolWorker>& decode) {
  const double osl = static_cast<double>(req.workload.output_tokens);
  for (const Layout& layout : WorkerLayouts(model, size, req)) {
    for (const EpSetting& ep : EpSettingsToTry(model, layout, req)) {
      PerfOptions perf = req.perf;
      perf.ep = ep;
      auto step = StepModel::Create(model, cluster, layout, perf);
      if (!step.ok()) break;
      Workload w = req.workload;
      w.batch = 1;
      const PrefillEstimate pre = step->EstimatePrefill(w.prompt_tokens);
      const StepEstimate one = step->Estimate(w, pre);
      if (!one.memory.Fits()) break;
      const double gpus = static_cast<double>(layout.gpus());
      if (one.ttft_s + perf.engine.FrontEndS(w.prompt_tokens) <= req.slo.max_ttft_s) {
        // What it computes, or what its API servers tokenize where that is less.
        const double per_s = std::min(
            PrefillWorkerRequestsPerS(*step, req.workload.prompt_tokens,
                                      req.perf.max_batched_tokens),
            FrontEndRequestsPerS(perf.engine, layout.Replicas(), req.workload.prompt_tokens));
        prefill.push_back({layout, ep, one, per_s / gpus});
      }
      // Decode: the largest batch (powers of two up to what fits) within the TPOT SLO.
      const int64_t cap = std::min<int64_t>(std::max<int64_t>(1, one.memory.max_sequences),
                                            req.max_batch * layout.AttentionDp());
      std::optional<PoolWorker> best;
      for (int64_t b = 1;; b = std::min(cap, 2 * b)) {
        w.batch = b;
        const StepEstimate e = step->Estimate(w, pre);
        if (!e.memory.Fits() || e.tpot_s > req.slo.max_tpot_s) break;
        const double rate = static_cast<double>(b) / (osl * e.tpot_s) / gpus;
        if (!best || rate > best->requests_per_s_per_gpu) best = PoolWorker{layout, ep, e, rate};
        if (b == cap) break;
      }
      if (best) decode.push_back(*best);
    }
  }
}

void KeepBestWorkers(std::vector<PoolWorker>& workers, size_t keep) {
  std::stable_sort(workers.begin(), workers.end(), [](const PoolWorker& a, const PoolWorker& b) {
    return a.requests_per_s_per_gpu > b.requests_per_s_per_gpu;
  });
  if (workers.size() > keep) workers.resize(keep);
}

DeploymentVerdict SplitAlone(const DisaggPlanEntry& split, const Slo& slo) {
  const OperatingPoint& p = *split.at_load;
  return {true, fmt::format("disaggregated {} wins: it meets the SLOs at this load ({} TTFT {}, "
                            "TPOT {}, {:.1f} tokens/s per GPU) and no aggregated layout of these "
                            "GPUs does",
                            split.deployment.ToString(), slo.PercentileName(),
                            FormatSeconds(p.ttft.at_slo_s), FormatSeconds(p.tpot.at_slo_s),
                            p.billed_output_tokens_per_s_per_gpu)};
}

DeploymentVerdict CompareDeployments(const PlanEntry& aggregated,
                                     const std::optional<DisaggPlanEntry>& disaggregated,
                                     Objective objective, const Slo& slo) {
  DeploymentVerdict v;
  const OperatingPoint& a = *aggregated.at_load;
  const std::string agg = aggregated.estimate.layout.ToString();
  if (!disaggregated) {
    v.why = fmt::format(
        "aggregated {} wins: no prefill/decode split of these GPUs meets the SLOs at this load "
        "with more tokens per GPU",
        agg);
    return v;
  }
  const DisaggPlanEntry& d = *disaggregated;
  const OperatingPoint& b = *d.at_load;
  // A side that meets the SLOs (at their percentile, keeping up with the load) beats one that
  // does not, whatever the objective says; between equals the objective decides.
  const auto ka = RankKey(objective, a), kb = RankKey(objective, b);
  v.disaggregated_wins = b.meets_slo != a.meets_slo ? b.meets_slo : kb > ka;
  // Both bill the same tokens per GPU (a rate both keep up with on as many GPUs): TPOT decides.
  const bool tokens_tie =
      a.meets_slo == b.meets_slo && objective != Objective::kLatency && ka.first == kb.first;
  // The winner's figures first.
  const OperatingPoint& w = v.disaggregated_wins ? b : a;
  const OperatingPoint& l = v.disaggregated_wins ? a : b;
  const std::string figures = fmt::format(
      "{:.1f} against {:.1f} tokens/s per GPU, TPOT {} against {}, TTFT {} against {} ({}){}",
      w.billed_output_tokens_per_s_per_gpu, l.billed_output_tokens_per_s_per_gpu,
      FormatSeconds(w.tpot.at_slo_s), FormatSeconds(l.tpot.at_slo_s),
      FormatSeconds(w.ttft.at_slo_s), FormatSeconds(l.ttft.at_slo_s), slo.PercentileName(),
      w.meets_slo == l.meets_slo ? ""
      : w.meets_slo              ? "; only the winner meets the SLOs at this load"
                                 : "");
  const int64_t agg_gpus = aggregated.estimate.layout.gpus();
  const int64_t disagg_gpus = d.deployment.gpus();
  if (tokens_tie) {
    v.why = fmt::format(
        "{} {} wins over {} {}: {} ({} GPUs against {}); both serve the load's tokens per GPU "
        "(one {:.0f}% bucket), so the shorter TPOT decides",
        v.disaggregated_wins ? "disaggregated" : "aggregated",
        v.disaggregated_wins ? d.deployment.ToString() : agg,
        v.disaggregated_wins ? "aggregated" : "disaggregated",
        v.disaggregated_wins ? agg : d.deployment.ToString(), figures,
        v.disaggregated_wins ? disagg_gpus : agg_gpus,
        v.disaggregated_wins ? agg_gpus : disagg_gpus, 100 * kRankTieFraction);
  } else if (v.disaggregated_wins) {
    v.why = fmt::format(
        "disaggregated {} wins over aggregated {}: {} ({} GPUs against {}); its decode steps carry "
        "no prompt chunks, so each pool runs the layout and batch its own phase wants",
        d.deployment.ToString(), agg, figures, disagg_gpus, agg_gpus);
  } else {
    v.why = fmt::format(
        "aggregated {} wins over disaggregated {}: {} ({} GPUs against {}); {}", agg,
        d.deployment.ToString(), figures, agg_gpus, disagg_gpus,
        objective == Objective::kLatency && a.meets_slo == b.meets_slo
            ? "the latency objective ranks by TPOT, and no split searched shortens it"
            : "splitting the GPUs costs more than keeping prompt chunks out of the decode steps "
              "saves");
  }
  return v;
}

StatusOr<PlanAnswer> DecidePlan(const ModelSpec& model, const ClusterSpec& cluster,
                                const PlanRequest& request, const PlanResult& aggregated,
                                const std::optional<DisaggPlanEntry>& disaggregated) {
  PlanAnswer a;
  if (aggregated.ranked.empty()) {
    if (!disaggregated) return aggregated.unranked;
    a.verdict = SplitAlone(*disaggregated, request.slo);
  } else {
    a.verdict = CompareDeployments(aggregated.ranked.front(), disaggregated, request.objective,
                                   request.slo);
  }
  if (a.verdict.disaggregated_wins) {
    a.winner = disaggregated->deployment;
    return a;
  }
  SW_ASSIGN_OR_RETURN(a.winner,
                      EntryDeployment(model, cluster, request, aggregated.ranked.front()));
  return a;
}

}  // namespace shardwise
