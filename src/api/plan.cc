#include "shardwise/api/plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <future>
#include <system_error>

#include "shardwise/api/launch.h"

namespace shardwise::api {
namespace {

StatusOr<PlanLoad> Load(const PlanRequest& r) {
  if (r.concurrency && r.rate) {
    return FieldError("concurrency",
                      "`concurrency` and `rate` exclude each other: pick a closed or an open loop");
  }
  if (r.concurrency) {
    if (*r.concurrency < 1 || *r.concurrency > 10'000'000) {
      return FieldError(
          "concurrency",
          fmt::format("`concurrency` must be between 1 and 10,000,000 clients, got {}",
                      *r.concurrency));
    }
    return PlanLoad{PlanLoad::Kind::kConcurrency, static_cast<double>(*r.concurrency), {}};
  }
  if (r.rate) {
    SW_RETURN_IF_ERROR(CheckRate(*r.rate));
    return PlanLoad{PlanLoad::Kind::kRate, *r.rate, {}};
  }
  return PlanLoad{};
}

// The bands of a ranked entry at the load (sim/bands.h).
LoadBands EntryBands(const PlanEntry& e, const ClusterSpec& cluster, const PerfOptions& perf,
                     bool closed_loop) {
  return BandsAtLoad(PhaseBand(e.estimate.prefill, cluster.gpu, perf.engine, perf.weight_dtype),
                     PhaseBand(e.estimate.decode, cluster.gpu, perf.engine, perf.weight_dtype),
                     e.at_load ? e.at_load->out_of_phase : std::nullopt, perf.engine,
                     cluster.gpu.name, closed_loop);
}

// The aggregated search and, beside it (each simulating its leaders in parallel), the
// disaggregated one; then the verdict and the winner. Where no aggregated layout fits or meets
// the SLOs at the load, a split that does answers alone.
Status SearchBoth(PlanReport& rep) {
  shardwise::PlanRequest& req = rep.request;
  req.allow_unranked = rep.searched_disaggregated;
  const shardwise::PlanRequest split_request = req;  // the split search's own copy
  const auto search_split = [&rep, split_request] {
    return PlanDisaggregated(rep.model, rep.cluster, split_request);
  };
  std::future<StatusOr<std::optional<DisaggPlanEntry>>> split;
  if (rep.searched_disaggregated) {
    try {
      split = std::async(std::launch::async, search_split);
    } catch (const std::system_error&) {
      // No thread to spare: the split search runs after the aggregated one.
    }
  }
  StatusOr<PlanResult> aggregated = shardwise::Plan(rep.model, rep.cluster, req);
  StatusOr<std::optional<DisaggPlanEntry>> best = std::optional<DisaggPlanEntry>();
  if (split.valid()) {
    best = split.get();
  } else if (rep.searched_disaggregated && aggregated.ok()) {
    best = search_split();
  }
  SW_RETURN_IF_ERROR(aggregated.status());
  SW_ASSIGN_OR_RETURN(rep.disaggregated, std::move(best));
  rep.result = std::move(*aggregated);
  SW_ASSIGN_OR_RETURN(PlanAnswer answer,
                      DecidePlan(rep.model, rep.cluster, req, rep.result, rep.disaggregated));
  rep.verdict = std::move(answer.verdict);
  rep.winner = std::move(answer.winner);
  return Status();
}

}  // namespace

StatusOr<PlanReport> Plan(const Catalog& catalog, const PlanRequest& r) {
  PlanReport rep;
  SW_ASSIGN_OR_RETURN(rep.model, catalog.Model(r.model));
  std::string profile_note;
  SW_ASSIGN_OR_RETURN(rep.cluster, catalog.Cluster(r.cluster, &profile_note));
  if (!profile_note.empty()) rep.notes.push_back(profile_note);
  SW_ASSIGN_OR_RETURN(const LengthSpread spread, ResolveLengthSpread(r.lengths));
  SW_ASSIGN_OR_RETURN(rep.options, ResolveServingOptions(catalog, rep.model, r.serving,
                                                         DrawnLengths(r.isl, r.osl, spread)));
  shardwise::PlanRequest& req = rep.request;
  req.perf = rep.options.perf;
  req.search_ep = rep.options.search_ep;
  req.max_batch = rep.options.max_batch;
  StatusOr<Objective> objective = ParseObjective(r.objective);
  if (!objective.ok()) return objective.status().WithField("objective");
  req.objective = *objective;
  if (r.top < 1 || r.top > 1000) return FieldError("top", "`top` must be between 1 and 1000");
  req.top = r.top;
  req.workload.prompt_tokens = r.isl;
  req.workload.output_tokens = r.osl;
  SW_ASSIGN_OR_RETURN(req.slo, ResolveSlo(r.slo));
  SW_ASSIGN_OR_RETURN(req.load, Load(r));
  req.load.lengths = spread;
  if (!r.layout.empty()) {
    DeploymentSpec only;
    only.layout = r.layout;
    // Validates the layout against the model and the options as a deployment would.
    SW_RETURN_IF_ERROR(
        ResolveDeployment(catalog, rep.model, rep.cluster, rep.options, only).status());
    req.only_layout = ParseLayout(r.layout).value();
  }
  // The clients share the GPUs of the layout asked for, else the cluster's.
  if (r.concurrency) {
    SW_RETURN_IF_ERROR(CheckClients(
        *r.concurrency, req.only_layout ? req.only_layout->gpus() : rep.cluster.num_gpus));
  }
  const auto start = std::chrono::steady_clock::now();
  rep.searched_disaggregated = r.disaggregated && !req.only_layout;
  SW_RETURN_IF_ERROR(SearchBoth(rep));
  rep.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  SW_ASSIGN_OR_RETURN(rep.winner_estimate,
                      EstimateDeployment(rep.model, rep.winner, rep.request.workload));
  rep.saved = Save("plan", r.model, r.cluster, r.serving, rep.winner, r.isl, r.osl);
  rep.saved.lengths = r.lengths;
  rep.saved.slo = r.slo;
  const OperatingPoint& at = rep.verdict.disaggregated_wins ? *rep.disaggregated->at_load
                                                            : *rep.result.ranked.front().at_load;
  if (req.load.kind == PlanLoad::Kind::kRate) {
    rep.saved.rate = req.load.value;
    rep.saved.in_flight = at.concurrency;
  } else {
    rep.saved.concurrency = std::llround(at.concurrency);  // offline: the winner's clients
  }
  const bool closed = req.load.kind == PlanLoad::Kind::kConcurrency;
  std::string unfit;      // layouts whose loop out of phase did not fit their KV cache
  std::string unsettled;  // and those whose loop out of phase did not settle
  for (const PlanEntry& e : rep.result.ranked) {
    rep.bands.push_back(EntryBands(e, rep.cluster, req.perf, closed));
    if (e.at_load && e.at_load->out_of_phase_failed) {
      unfit += (unfit.empty() ? "" : ", ") + e.estimate.layout.ToString();
    }
    if (e.at_load && e.at_load->out_of_phase && !e.at_load->out_of_phase->settled) {
      unsettled += (unsettled.empty() ? "" : ", ") + e.estimate.layout.ToString();
    }
  }
  // The winner's formats and layout (a cp layout asked for with --layout), as simulate notes them.
  rep.notes.clear();
  AddDeploymentNotes(rep.winner, rep.notes);
  if (!profile_note.empty()) rep.notes.push_back(profile_note);
  if (std::string cp = UnsearchedContextParallelNote(req, rep.cluster.num_gpus); !cp.empty()) {
    rep.notes.push_back(std::move(cp));
  }
  if (!rep.result.unranked.ok()) {
    rep.notes.push_back("the disaggregated split answers alone: " + rep.result.unranked.message());
  }
  for (const std::string& layout : rep.result.unserved) {
    rep.notes.push_back("not ranked, it cannot run this load: " + layout);
  }
  if (!unfit.empty()) {
    rep.notes.push_back(
        fmt::format("the clients out of phase need longer requests than the KV "
                    "cache of {} holds; those bands cover the lockstep loop only",
                    unfit));
  }
  if (!unsettled.empty()) {
    rep.notes.push_back(fmt::format(
        "the clients out of phase did not settle on {} (its window's halves still differ after "
        "the longest run): that edge of the band is the last run's mean",
        unsettled));
  }
  if (req.objective == Objective::kCost) {
    // Every layout uses all the cluster's GPUs at one price: $ per token = $/GPU-hour / 3600 /
    // tokens/s per GPU, so cost and throughput rank alike; a load makes them differ.
    rep.notes.push_back(fmt::format(
        "every layout here pays for the same {} GPUs, so cost per token ranks them as throughput "
        "per GPU does; for the cheapest deployment of a load use 'shardwise recommend --rate R "
        "--max-ttft-ms T --max-tpot-ms P --objective cost'",
        rep.cluster.num_gpus));
  }
  return rep;
}

StatusOr<std::vector<Layout>> PlannersLayouts(const ModelSpec& model, const ClusterSpec& cluster,
                                              const ServingOptions& options,
                                              const Workload& lengths, const LengthSpread& spread,
                                              const Slo& slo, int top) {
  shardwise::PlanRequest req;
  req.load.lengths = spread;
  req.perf = options.perf;
  req.max_batch = options.max_batch;
  req.slo = slo;
  // Ranked as plan ranks by default: offline it simulates its leading `top` (and a few more)
  // and re-ranks them by what they did, so fewer would change its first.
  req.top = std::max(top, PlanRequest{}.top);
  req.workload.prompt_tokens = lengths.prompt_tokens;
  req.workload.output_tokens = lengths.output_tokens;
  SW_ASSIGN_OR_RETURN(const PlanResult plan, shardwise::Plan(model, cluster, req));
  std::vector<Layout> layouts;
  for (const PlanEntry& e : plan.ranked) {
    if (static_cast<int>(layouts.size()) < top) layouts.push_back(e.estimate.layout);
  }
  return layouts;
}

StatusOr<Layout> PlannersLayout(const ModelSpec& model, const ClusterSpec& cluster,
                                const ServingOptions& options, const Workload& lengths,
                                const LengthSpread& spread, const Slo& slo) {
  SW_ASSIGN_OR_RETURN(const std::vector<Layout> layouts,
                      PlannersLayouts(model, cluster, options, lengths, spread, slo, 1));
  return layouts.front();
}

namespace {

// What ChooseDeployment picks: the verdict's winner, the best split, or ranked entry `index`.
struct Pick {
  enum class Kind { kWinner, kSplit, kRanked } kind = Kind::kWinner;
  size_t index = 0;
};

StatusOr<Pick> PickDeployment(const PlanReport& rep, std::string_view which,
                              std::optional<int> rank) {
  if (which != "winner" && which != "aggregated" && which != "disaggregated") {
    return FieldError("emit_deployment",
                      "`emit_deployment` must be winner, aggregated or disaggregated");
  }
  if (rank && which == "disaggregated") {
    return FieldError("emit_rank",
                      "`emit_rank` picks an aggregated layout; drop it to deploy the "
                      "disaggregated deployment");
  }
  if (which == "disaggregated") {
    if (rep.disaggregated) return Pick{Pick::Kind::kSplit};
    return FieldError("emit_deployment",
                      rep.searched_disaggregated
                          ? "`emit_deployment` disaggregated: plan found no prefill/decode split "
                            "of these GPUs that fits and meets the SLOs; deploy the aggregated "
                            "layout or relax the SLOs"
                          : "`emit_deployment` disaggregated needs plan's disaggregated search, "
                            "which `disagg` off and a `layout` turn off");
  }
  if (which == "winner" && !rank) return Pick{Pick::Kind::kWinner};
  if (rep.result.ranked.empty()) {
    return FieldError(rank ? "emit_rank" : "emit_deployment",
                      fmt::format("`{}`: no aggregated layout of these GPUs fits or meets the "
                                  "SLOs at this load; deploy the disaggregated split",
                                  rank ? "emit_rank" : "emit_deployment"));
  }
  const int n = rank.value_or(1);
  if (n < 1 || n > static_cast<int>(rep.result.ranked.size())) {
    return FieldError("emit_rank", fmt::format("`emit_rank` {}: {} layouts were ranked (raise "
                                               "`top`)",
                                               n, rep.result.ranked.size()));
  }
  return Pick{Pick::Kind::kRanked, static_cast<size_t>(n - 1)};
}

}  // namespace

StatusOr<Deployment> ChooseDeployment(const PlanReport& rep, std::string_view which,
                                      std::optional<int> rank) {
  SW_ASSIGN_OR_RETURN(const Pick pick, PickDeployment(rep, which, rank));
  switch (pick.kind) {
    case Pick::Kind::kWinner:
      return rep.winner;
    case Pick::Kind::kSplit:
      return rep.disaggregated->deployment;
    case Pick::Kind::kRanked:
      break;
  }
  return EntryDeployment(rep.model, rep.cluster, rep.request, rep.result.ranked[pick.index]);
}

StatusOr<SavedDeployment> ChosenQuestion(const PlanReport& rep, std::string_view which,
                                         std::optional<int> rank) {
  SW_ASSIGN_OR_RETURN(const Pick pick, PickDeployment(rep, which, rank));
  if (pick.kind == Pick::Kind::kWinner) return rep.saved;
  SW_ASSIGN_OR_RETURN(const Deployment d, ChooseDeployment(rep, which, rank));
  const SavedDeployment& w = rep.saved;
  SavedDeployment saved = Save(w.command, w.model, w.cluster, w.serving, d, w.isl, w.osl);
  saved.lengths = w.lengths;
  saved.slo = w.slo;
  saved.rate = w.rate;
  const OperatingPoint& at = pick.kind == Pick::Kind::kSplit
                                 ? *rep.disaggregated->at_load
                                 : *rep.result.ranked[pick.index].at_load;
  if (saved.rate) {
    saved.in_flight = at.concurrency;
  } else {
    saved.concurrency = std::llround(at.concurrency);
  }
  return saved;
}

Status WithLaunchableRank(const PlanReport& report, std::string_view engine, std::string_view which,
                          const Status& failed) {
  if (which == "disaggregated") return failed;  // no rank picks a split
  // Whether `engine` launches `d`: the served model's name and the user's overrides play no
  // part in whether it runs the layout.
  const auto launches = [&](const Deployment& d) {
    return Launch(engine, report.model.name, report.model, d, report.request.workload, {{"x"}})
        .ok();
  };
  StatusOr<Deployment> chosen = ChooseDeployment(report, which, std::nullopt);
  if (!chosen.ok() || launches(*chosen)) return failed;  // the layout is not what failed
  for (size_t i = 0; i < report.result.ranked.size(); ++i) {
    StatusOr<Deployment> d =
        EntryDeployment(report.model, report.cluster, report.request, report.result.ranked[i]);
    if (!d.ok() || !launches(*d)) continue;
    return Status(failed.code(),
                  fmt::format("{}: --emit-rank {} ({}) is the best ranked layout {} runs",
                              failed.message(), i + 1, d->ToString(), engine),
                  failed.field());
  }
  return failed;
}

}  // namespace shardwise::api
