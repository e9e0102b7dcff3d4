#include "shardwise/plan/planner.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <tuple>

#include "shardwise/common/format.h"
#include "shardwise/common/parallel.h"
#include "shardwise/common/suggest.h"
#include "shardwise/price/energy.h"
#include "shardwise/price/price.h"

namespace shardwise {
namespace {

// Context parallelism pays only for long prompts (7 Scaling Across Hardware, 7.6): below this
// prompt length the planner does not try it.
constexpr int64_t kMinPromptForCp = 8192;
constexpr int64_t kMaxCp = 8;
// Largest expert group searched with expert-TP over attention DP: the engines gather tokens over
// it every MoE layer (all-gather, reduce-scatter), priced over whatever links the group spans
// (an HGX node's NVLink up to 8 GPUs, the scale-out network beyond); TensorRT-LLM's and SGLang's
// DeepSeek and Qwen3 deployments of it use 8-16 GPUs with expert-TP 2 or 4 (a user may give any
// other as --layout).
constexpr int64_t kMaxGatherGroup = 16;

std::vector<int64_t> Divisors(int64_t n) {
  std::vector<int64_t> out;
  for (int64_t d = 1; d <= n; ++d) {
    if (n % d == 0) out.push_back(d);
  }
  return out;
}

double UsdPerMtokAt(const ClusterSpec& c, const Layout& layout, double output_tokens_per_s) {
  return UsdPerMtok(c.gpu.usd_per_gpu_hour * static_cast<double>(layout.gpus()),
                    output_tokens_per_s);
}

// Layouts simulated at a given load (closed or open loop); offline, the top ones are.
constexpr size_t kMaxSimulatedAtLoad = 32;
constexpr size_t kExtraSimulatedOffline = 3;

// TPOT while the batch is kept full: every iteration also prefills the prompts of the requests
// that replace finished ones, batch / OSL of them per iteration (chunked prefill mixes them in).
double SteadyTpotS(const StepEstimate& e) {
  return e.tpot_s + static_cast<double>(e.workload.batch) * e.prefill_s_per_request /
                        static_cast<double>(e.workload.output_tokens);
}

// Higher is better.
double Score(Objective objective, const StepEstimate& e) {
  switch (objective) {
    case Objective::kLatency:
      return -e.tpot_s - 1e-3 * e.ttft_s;
    case Objective::kThroughput:
    case Objective::kCost:
      return e.output_tokens_per_s_per_gpu;
  }
  return 0;
}

std::string PlacementPhrase(const ClusterSpec& c, const Layout& l) {
  std::vector<std::string> parts;
  auto where = [&](int64_t size, int64_t stride) {
    const GroupShape g = PlaceGroup(c, size, stride).value();
    const int level = g.HighestLevel();
    return level <= 0 ? "inside one " + c.levels[0].name + " domain"
                      : "across " + c.levels[level].name;
  };
  if (l.tp > 1) parts.push_back(fmt::format("TP{} {}", l.tp, where(l.tp, 1)));
  if (l.ep > 1) parts.push_back(fmt::format("EP{} {}", l.ep, where(l.ep, l.EpStride())));
  if (l.GathersTokensForExperts()) {
    const int64_t group = l.ep * l.etp;
    parts.push_back(fmt::format("expert-TP{} over attention DP{}, tokens gathered {}", l.etp,
                                l.AttentionDp(), where(group, 1)));
  } else if (l.AttentionDp() > 1) {
    parts.push_back(fmt::format("attention DP{}", l.AttentionDp()));
  }
  if (l.cp > 1) parts.push_back(fmt::format("CP{} {}", l.cp, where(l.cp, l.CpStride())));
  if (l.pp > 1) parts.push_back(fmt::format("PP{} {}", l.pp, where(l.pp, l.PpStride())));
  if (l.Replicas() > 1) parts.push_back(fmt::format("{} replicas", l.Replicas()));
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out.empty() ? "one GPU" : out;
}

// The simulated layout that came closest to serving the load within the SLOs, for the error that
// says which constraint binds and by how much.
struct ClosestMiss {
  std::string layout;
  OperatingPoint point;
  double worst = std::numeric_limits<double>::infinity();  // its largest ratio to a limit

  void Consider(const std::string& name, const OperatingPoint& p, const PlanRequest& req) {
    const double ratio =
        std::max({p.ttft.at_slo_s / req.slo.max_ttft_s, p.tpot.at_slo_s / req.slo.max_tpot_s,
                  p.overloaded && p.requests_per_s > 0 ? req.load.value / p.requests_per_s : 0.0});
    if (ratio < worst) {
      worst = ratio;
      layout = name;
      point = p;
    }
  }

  Status NoneMeets(const ModelSpec& model, const ClusterSpec& cluster,
                   const PlanRequest& req) const {
    const std::string where =
        fmt::format("no layout of {} on {} ({} GPUs)", model.name, cluster.name, cluster.num_gpus);
    if (layout.empty()) return FailedPrecondition(where + " could be simulated at this load");
    if (point.overloaded) {
      return FailedPrecondition(fmt::format(
          "{} serves {:g} requests/s: the closest, {}, serves {}; add GPUs (`nodes`) or lower "
          "the `rate`",
          where, req.load.value, layout, ServedShare(point.requests_per_s, req.load.value)));
    }
    std::vector<std::string> misses;
    const std::string pct = req.slo.PercentileName();
    for (const auto& [name, value, limit, field] :
         {std::tuple{"TTFT", point.ttft.at_slo_s, req.slo.max_ttft_s, "max_ttft_ms"},
          std::tuple{"TPOT", point.tpot.at_slo_s, req.slo.max_tpot_s, "max_tpot_ms"}}) {
      if (value > limit) {
        misses.push_back(fmt::format("{} {} {} against `{}` {} ({:.2f}x)", pct, name,
                                     FormatSeconds(value), field, FormatSeconds(limit),
                                     value / limit));
      }
    }
    std::string what;
    for (const std::string& m : misses) what += (what.empty() ? "" : " and ") + m;
    return FailedPrecondition(fmt::format(
        "{} meets the SLOs at this load: the closest, {}, has {}; relax the SLOs, lower the load "
        "or add GPUs",
        where, layout, what));
  }
};

// Simulates the leading entries at the request's load, drops those that miss an SLO there or fall
// behind the offered rate (offline: halves the batch until they meet it), and re-ranks them by
// what they do.
Status RankAtLoad(const ModelSpec& model, const ClusterSpec& cluster, const PlanRequest& req,
                  std::vector<PlanEntry>& entries, std::vector<std::string>& unserved) {
  ClosestMiss closest;
  const bool offline = req.load.kind == PlanLoad::Kind::kOffline;
  const size_t limit =
      offline ? static_cast<size_t>(req.top) + kExtraSimulatedOffline : kMaxSimulatedAtLoad;
  // Each leading entry at the load (independent simulations, run in parallel): the operating
  // points it was simulated at, and the entry when one met the SLOs.
  struct Outcome {
    Status status;
    std::vector<OperatingPoint> tried;
    std::optional<PlanEntry> kept;
  };
  const std::function<Outcome(size_t)> evaluate = [&](size_t i) {
    Outcome out;
    PlanEntry entry = entries[i];
    PerfOptions perf = req.perf;
    perf.ep = entry.ep;
    StatusOr<StepModel> step = StepModel::Create(model, cluster, entry.estimate.layout, perf);
    StatusOr<Deployment> deployment = EntryDeployment(model, cluster, req, entry);
    if (!step.ok() || !deployment.ok()) {
      out.status = !step.ok() ? step.status() : deployment.status();
      return out;
    }
    Workload w = entry.estimate.workload;
    while (true) {
      const double clients = static_cast<double>(w.batch * entry.estimate.layout.Replicas());
      StatusOr<OperatingPoint> p =
          SimulateOperatingPoint(model, *deployment, w, req.load, clients, req.slo);
      if (!p.ok()) {
        out.status = p.status();
        return out;
      }
      out.tried.push_back(*p);
      if (p->meets_slo) {
        if (w.batch != entry.estimate.workload.batch) {
          entry.estimate = step->Estimate(w);
          entry.limited_by = "the SLO";
        }
        // The latency objective's step point is one sequence; at a load the row's batch, memory
        // and bound are those of the sequences the load keeps on each replica, as many as fit.
        if (!offline && req.objective == Objective::kLatency) {
          Workload kept = w;
          const int64_t held = static_cast<int64_t>(
              std::ceil(p->concurrency / static_cast<double>(entry.estimate.layout.Replicas())));
          kept.batch = std::clamp<int64_t>(
              held, 1, std::max<int64_t>(1, entry.estimate.memory.max_sequences));
          if (const StepEstimate at = step->Estimate(kept); at.memory.Fits()) entry.estimate = at;
        }
        entry.at_load = *p;
        entry.usd_per_mtok_output = p->usd_per_mtok_output;
        entry.joules_per_output_token = p->joules_per_output_token;
        out.kept = std::move(entry);
        return out;
      }
      if (!offline || w.batch == 1) return out;
      w.batch /= 2;
    }
  };
  std::vector<Outcome> outcomes = ParallelMap(std::min(entries.size(), limit), evaluate);
  std::vector<PlanEntry> kept;
  for (size_t i = 0; i < outcomes.size(); ++i) {
    const Status& status = outcomes[i].status;
    // A layout that cannot run the load (a drawn request beyond what a replica holds) is
    // dropped, and said so; any other failure is the answer.
    if (status.code() == StatusCode::kFailedPrecondition) {
      unserved.push_back(entries[i].estimate.layout.ToString() + ": " + status.message());
      continue;
    }
    SW_RETURN_IF_ERROR(status);
    for (const OperatingPoint& p : outcomes[i].tried) {
      closest.Consider(entries[i].estimate.layout.ToString(), p, req);
    }
    if (outcomes[i].kept) kept.push_back(std::move(*outcomes[i].kept));
  }
  if (kept.empty() && closest.layout.empty() && !unserved.empty()) {
    return FailedPrecondition(fmt::format("no layout of {} on {} can run this load: {}", model.name,
                                          cluster.name, unserved.front()));
  }
  if (kept.empty()) return closest.NoneMeets(model, cluster, req);
  std::stable_sort(kept.begin(), kept.end(), [&](const PlanEntry& a, const PlanEntry& b) {
    return RankKey(req.objective, *a.at_load) > RankKey(req.objective, *b.at_load);
  });
  entries = std::move(kept);
  return Status();
}

// A reported entry's closed loop (--concurrency) at fixed lengths, run again out of phase, as
// simulate does for its band (spread outputs already put the clients out of phase); only the
// reported entries, so the ranking costs no more. It never fails the plan: the lockstep loop ran.
void AddOutOfPhase(const ModelSpec& model, const ClusterSpec& cluster, const PlanRequest& req,
                   PlanEntry& entry) {
  const Layout& layout = entry.estimate.layout;
  if (!entry.at_load || req.load.kind != PlanLoad::Kind::kConcurrency ||
      req.load.lengths.output != LengthDistribution::kFixed ||
      req.load.value <= static_cast<double>(layout.Replicas())) {
    return;
  }
  const StatusOr<Deployment> deployment = EntryDeployment(model, cluster, req, entry);
  if (!deployment.ok()) return;
  const double clients = static_cast<double>(entry.estimate.workload.batch * layout.Replicas());
  const StatusOr<OutOfPhase> run =
      SimulateOutOfPhasePoint(model, *deployment, entry.estimate.workload, req.load, clients);
  if (run.ok()) {
    entry.at_load->out_of_phase = *run;
  } else {
    entry.at_load->out_of_phase_failed = true;
  }
}

struct LayoutOutcome {
  bool fits = false;           // batch 1 fits in memory
  double shortfall_bytes = 0;  // when it does not
  std::optional<PlanEntry> best;
};

// The layout's best batch under the objective and the (offline) SLO screen; every feasible
// point joins `all_points`.
LayoutOutcome BestBatch(const StepModel& step, const ClusterSpec& cluster, const PlanRequest& req,
                        PlanResult& result, std::vector<PlanEntry>& all_points) {
  LayoutOutcome outcome;
  const Layout& layout = step.layout();
  Workload w = req.workload;
  w.batch = 1;
  const PrefillEstimate prefill = step.EstimatePrefill(w.prompt_tokens);  // batch-independent
  const StepEstimate one = step.Estimate(w, prefill);
  ++result.points_evaluated;
  if (!one.memory.Fits()) {
    outcome.shortfall_bytes = one.memory.ShortfallBytes();
    return outcome;
  }
  outcome.fits = true;
  const int64_t fit = std::max<int64_t>(1, one.memory.max_sequences);
  // max_batch holds per attention rank: an attention-DP replica runs that many on each.
  const int64_t batch_cap = req.max_batch * layout.AttentionDp();
  // Without chunked prefill a whole prompt must fit the iteration's token budget beside the
  // decodes: a larger decode batch would admit no new prompt (one longer than the whole budget
  // runs beside any, as the simulator runs it).
  const int64_t prompt = req.workload.prompt_tokens;
  const int64_t token_cap =
      ChunksPrompts(EngineSchedule(req.perf.engine)) || prompt >= req.perf.max_batched_tokens
          ? batch_cap
          : (req.perf.max_batched_tokens - prompt) * layout.AttentionDp();
  const int64_t cap = std::min({fit, batch_cap, token_cap});
  // Batches: powers of two up to the cap, and the cap itself.
  std::vector<int64_t> batches;
  for (int64_t b = 1; b < cap; b *= 2) batches.push_back(b);
  batches.push_back(cap);
  PlanEntry best;
  bool have = false;
  bool slo_stopped = false;
  for (int64_t b : batches) {
    w.batch = b;
    const StepEstimate e = b == 1 ? one : step.Estimate(w, prefill);
    if (b != 1) ++result.points_evaluated;
    if (!e.memory.Fits()) break;
    // Offline the analytic steady state screens the SLOs; at a given load the simulation does.
    if (req.load.kind == PlanLoad::Kind::kOffline &&
        (e.ttft_s > req.slo.max_ttft_s || SteadyTpotS(e) > req.slo.max_tpot_s)) {
      slo_stopped = true;
      break;  // larger batches only get slower per step
    }
    PlanEntry entry;
    entry.estimate = e;
    entry.usd_per_mtok_output = UsdPerMtokAt(cluster, e.layout, e.output_tokens_per_s);
    entry.joules_per_output_token = JoulesPerToken(
        cluster.gpu.board_power_w * static_cast<double>(e.layout.gpus()), e.output_tokens_per_s);
    all_points.push_back(entry);
    if (!have || Score(req.objective, e) > Score(req.objective, best.estimate)) {
      best = entry;
      have = true;
    }
  }
  if (!have) return outcome;
  const int64_t chosen = best.estimate.workload.batch;
  if (req.objective != Objective::kLatency && chosen == cap) {
    best.limited_by = cap == token_cap && token_cap < std::min(fit, batch_cap)
                          ? "the token budget (prompt + decodes per iteration)"
                      : cap == batch_cap && batch_cap < fit ? "--max-batch"
                                                            : "KV capacity";
  } else if (req.objective != Objective::kLatency && slo_stopped) {
    best.limited_by = "the SLO";
  }
  outcome.best = best;
  return outcome;
}

// How the EP group exchanges tokens, in words: "EP exchange prefill node-dedup, decode
// low-latency, fp8 dispatch, two-batch overlap".
std::string EpPhrase(const StepEstimate& e, const EpSetting& ep) {
  auto name = [](const PhaseBreakdown& p) {
    return p.ep_algorithm ? std::string(EpAlgorithmName(*p.ep_algorithm)) : std::string("-");
  };
  std::string out = e.prefill.ep_algorithm == e.decode.ep_algorithm
                        ? "EP exchange " + name(e.decode)
                        : "EP exchange prefill " + name(e.prefill) + ", decode " + name(e.decode);
  out += fmt::format(", {} dispatch", DtypeName(ep.dispatch_dtype));
  if (ep.two_batch_overlap) out += ", two-batch overlap";
  return out;
}

std::string Why(const ClusterSpec& c, const PlanEntry& entry, const PlanRequest& req) {
  const Objective objective = req.objective;
  const StepEstimate& e = entry.estimate;
  const PhaseBreakdown& d = e.decode;
  const double top = std::max({d.memory_s, d.compute_s, d.launch_s, d.tp_comm_s, d.ep_comm_s,
                               d.cp_comm_s, d.pp_comm_s, d.bubble_s, d.overhead_s});
  std::string goal = objective == Objective::kLatency
                         ? fmt::format("{:.0f} tokens/s per user", e.output_tokens_per_s_per_user)
                         : fmt::format("{:.0f} tokens/s per GPU", e.output_tokens_per_s_per_gpu);
  std::string line = fmt::format(
      "{}: {}; {} at batch {} by the step model; decode bound by {} ({:.0f}%)", e.layout.ToString(),
      PlacementPhrase(c, e.layout), goal, e.workload.batch, e.bound, 100 * top / d.total_s);
  if (!entry.limited_by.empty()) line += "; batch capped by " + entry.limited_by;
  if (d.ep_algorithm) line += "; " + EpPhrase(e, entry.ep);
  if (e.over_parallelised) line += "; over-parallelised TP";
  if (entry.at_load) {
    line += fmt::format("; simulated at {} in flight: {} TTFT {}, TPOT {}",
                        Counted(entry.at_load->concurrency, "request", "requests"),
                        req.slo.PercentileName(), FormatSeconds(entry.at_load->ttft.at_slo_s),
                        FormatSeconds(entry.at_load->tpot.at_slo_s));
  }
  return line;
}

}  // namespace

StatusOr<Deployment> EntryDeployment(const ModelSpec& model, const ClusterSpec& cluster,
                                     const PlanRequest& req, const PlanEntry& entry) {
  PerfOptions perf = req.perf;
  perf.ep = entry.ep;
  return Deployment::Aggregated(model, EnginePool(PoolRole::kAggregated, entry.estimate.layout, 1,
                                                  cluster, perf, req.max_batch));
}

std::vector<EpSetting> EpSettingsToTry(const ModelSpec& model, const Layout& layout,
                                       const PlanRequest& req) {
  // Expert-TP over attention DP gathers tokens: no DeepEP kernels (they need etp 1).
  if (!req.search_ep || !model.is_moe() || layout.ep <= 1 || layout.GathersTokensForExperts()) {
    return {req.perf.ep};
  }
  return {req.perf.ep, EpSetting{EpAlgorithm::kAuto, Dtype::kFp8, false},
          EpSetting{EpAlgorithm::kAuto, Dtype::kFp8, true}};
}

StatusOr<Objective> ParseObjective(std::string_view text) {
  if (text == "latency") return Objective::kLatency;
  if (text == "throughput") return Objective::kThroughput;
  if (text == "cost") return Objective::kCost;
  return Error(UnknownNameMessage("objective", text, {"latency", "throughput", "cost"},
                                  "use latency, throughput or cost"));
}

std::string_view ObjectiveName(Objective objective) {
  switch (objective) {
    case Objective::kLatency:
      return "latency";
    case Objective::kThroughput:
      return "throughput";
    case Objective::kCost:
      return "cost";
  }
  return "?";
}

std::string RankingPhrase(Objective objective) {
  return objective == Objective::kLatency
             ? "ranked by TPOT at load"
             : fmt::format("ranked by tok/s/GPU at load, those within {:g}% by TPOT",
                           100 * kRankTieFraction);
}

std::pair<double, double> RankKey(Objective objective, const OperatingPoint& p) {
  if (objective == Objective::kLatency) {
    return {-p.tpot.at_slo_s - 1e-3 * p.ttft.at_slo_s, -p.tpot.at_slo_s};
  }
  const double score = p.billed_output_tokens_per_s_per_gpu;
  // Nothing served ranks below any served amount.
  const double bucket = score <= 0 ? -std::numeric_limits<double>::infinity()
                                   : std::floor(std::log(score) / std::log1p(kRankTieFraction));
  return {bucket, -p.tpot.at_slo_s};
}

std::string UnsearchedContextParallelNote(const PlanRequest& request, int64_t gpus) {
  const EngineProfile& engine = request.perf.engine;
  if (request.only_layout || engine.context_parallel || gpus < 2 ||
      request.workload.prompt_tokens < kMinPromptForCp) {
    return "";
  }
  return fmt::format(
      "{} serves without context parallelism, so no layout with cp is ranked for these {}-token "
      "prompts ('simulate --layout' models one, as an engine with ring attention would run it)",
      engine.name, request.workload.prompt_tokens);
}

std::vector<Layout> EnumerateLayouts(const ModelSpec& m, int64_t gpus, int64_t prompt_tokens,
                                     const EngineProfile& engine, int64_t redundant_experts) {
  std::vector<Layout> out;
  const int64_t max_cp = engine.context_parallel && prompt_tokens >= kMinPromptForCp ? kMaxCp : 1;
  for (int64_t tp : Divisors(gpus)) {
    for (int64_t cp = 1; cp <= max_cp && gpus % (tp * cp) == 0; cp *= 2) {
      for (int64_t pp : Divisors(gpus / (tp * cp))) {
        if (pp > m.num_layers()) break;
        Layout base;
        base.tp = tp;
        base.cp = cp;
        base.pp = pp;
        base.dp = gpus / (tp * cp * pp);
        if (!ValidateLayout(base, m).ok()) continue;
        if (!m.is_moe()) {
          out.push_back(base);
          continue;
        }
        for (int64_t ep : Divisors(base.StageRanks())) {
          Layout l = base;
          l.ep = ep;
          if (ep > tp * cp && (ep % (tp * cp) != 0 || l.dp % l.AttentionDp() != 0)) continue;
          if (ValidateLayout(l, m, redundant_experts).ok()) out.push_back(l);
          // Experts split over attention-DP ranks (ep x etp above tp x cp), in expert groups
          // of at most kMaxGatherGroup ranks.
          for (int64_t etp : {2, 4}) {
            l.etp = etp;
            const int64_t group = ep * etp;
            if (ep < 2 || group <= tp * cp || group > kMaxGatherGroup || group % (tp * cp) != 0 ||
                l.dp % l.AttentionDp() != 0) {
              continue;
            }
            if (ValidateLayout(l, m, redundant_experts).ok()) out.push_back(l);
          }
        }
      }
    }
  }
  return out;
}

StatusOr<PlanResult> Plan(const ModelSpec& model, const ClusterSpec& cluster,
                          const PlanRequest& req) {
  if (req.max_batch < 1) return Error("`max_batch` must be at least 1");
  PlanResult result;
  std::vector<PlanEntry> best_per_layout;
  std::vector<PlanEntry> all_points;
  double least_short = std::numeric_limits<double>::infinity();
  std::string least_short_layout;
  const std::vector<Layout> layouts =
      req.only_layout ? std::vector<Layout>{*req.only_layout}
                      : EnumerateLayouts(model, cluster.num_gpus, req.workload.prompt_tokens,
                                         req.perf.engine, req.perf.redundant_experts);
  for (const Layout& layout : layouts) {
    ++result.layouts_considered;
    std::optional<PlanEntry> best;
    bool fits = false;
    for (const EpSetting& ep : EpSettingsToTry(model, layout, req)) {
      PerfOptions perf = req.perf;
      perf.ep = ep;
      auto step = StepModel::Create(model, cluster, layout, perf);
      if (!step.ok()) {
        if (req.only_layout) return step.status();
        break;
      }
      LayoutOutcome outcome = BestBatch(*step, cluster, req, result, all_points);
      if (!outcome.fits) {
        if (outcome.shortfall_bytes < least_short) {
          least_short = outcome.shortfall_bytes;
          least_short_layout = layout.ToString();
        }
        break;  // the exchange does not change memory
      }
      fits = true;
      if (outcome.best && (!best || Score(req.objective, outcome.best->estimate) >
                                        Score(req.objective, best->estimate))) {
        outcome.best->ep = ep;
        best = outcome.best;
      }
    }
    if (fits) ++result.layouts_fitting;
    if (best) best_per_layout.push_back(*best);
  }
  Status unranked;
  if (result.layouts_fitting == 0) {
    if (least_short_layout.empty()) {
      return Error(
          fmt::format("no valid layout of {} on {} ({} GPUs); check that the GPU count "
                      "suits the model's heads and layers",
                      model.name, cluster.name, cluster.num_gpus));
    }
    unranked = FailedPrecondition(
        fmt::format("{} ({}) does not fit on {} ({} x {}): even {} is short by {} per "
                    "GPU; add GPUs (--nodes), {}or a larger GPU",
                    model.name, DtypeName(req.perf.weight_dtype), cluster.name, cluster.num_gpus,
                    cluster.gpu.name, least_short_layout, FormatBytes(least_short),
                    BytesPerElement(req.perf.weight_dtype) > 1    ? "use --dtype fp8 or int4, "
                    : BytesPerElement(req.perf.weight_dtype) == 1 ? "use --dtype int4, "
                                                                  : ""));
  } else if (best_per_layout.empty()) {
    unranked =
        Error(fmt::format("no layout of {} on {} meets the SLOs (`max_ttft_ms`, "
                          "`max_tpot_ms`); relax them or add GPUs",
                          model.name, cluster.name));
  } else {
    std::stable_sort(best_per_layout.begin(), best_per_layout.end(),
                     [&](const PlanEntry& a, const PlanEntry& b) {
                       return Score(req.objective, a.estimate) > Score(req.objective, b.estimate);
                     });
    unranked = RankAtLoad(model, cluster, req, best_per_layout, result.unserved);
    for (size_t i = 0; unranked.ok() && i < best_per_layout.size() && static_cast<int>(i) < req.top;
         ++i) {
      best_per_layout[i].why = Why(cluster, best_per_layout[i], req);
      AddOutOfPhase(model, cluster, req, best_per_layout[i]);
      result.ranked.push_back(best_per_layout[i]);
    }
  }
  // Pareto front over every feasible point: fastest per user first, keep rising per-GPU rate.
  std::sort(all_points.begin(), all_points.end(), [](const PlanEntry& a, const PlanEntry& b) {
    return a.estimate.output_tokens_per_s_per_user > b.estimate.output_tokens_per_s_per_user;
  });
  double best_per_gpu = -1;
  for (const PlanEntry& p : all_points) {
    if (p.estimate.output_tokens_per_s_per_gpu > best_per_gpu) {
      best_per_gpu = p.estimate.output_tokens_per_s_per_gpu;
      result.pareto.push_back(p);
    }
  }
  if (!unranked.ok()) {
    // Only "none fits" or "none meets the SLOs" leaves the question to the disaggregated
    // search; any other failure (a simulation's, a step model's) is the answer.
    if (!req.allow_unranked || unranked.code() != StatusCode::kFailedPrecondition) {
      return unranked;
    }
    result.unranked = unranked;
  }
  return result;
}

}  // namespace shardwise
