#include "shardwise/api/price.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "shardwise/api/options.h"
#include "shardwise/api/plan.h"
#include "shardwise/common/format.h"
#include "shardwise/plan/planner.h"
#include "shardwise/price/energy.h"

namespace shardwise::api {
namespace {

Status CheckRequest(const PriceRequest& r) {
  // Bounds far outside any real bill, so a typo (or NaN, or infinity) is caught, not priced:
  // a GPU rents for a few $ an hour, a deployment idles at most 999 hours in 1,000, and the
  // largest public APIs serve well under a billion tokens per second.
  if (!(r.duty_cycle >= 1e-3 && r.duty_cycle <= 1)) {
    return FieldError("duty_cycle",
                      fmt::format("`duty_cycle` must be in [0.001, 1], got {:g}", r.duty_cycle));
  }
  for (const auto& [price, field] :
       {std::pair{r.api_usd_per_mtok_input, "api_usd_per_mtok_input"},
        std::pair{r.api_usd_per_mtok_output, "api_usd_per_mtok_output"}}) {
    if (price && !(*price > 0 && *price < 1e6)) {
      return FieldError(field, fmt::format("`{}` must be a positive price in $ per million "
                                           "tokens",
                                           field));
    }
  }
  if (r.usd_per_kwh && !(*r.usd_per_kwh > 0 && *r.usd_per_kwh <= 10)) {
    return FieldError("usd_per_kwh", fmt::format("`usd_per_kwh` must be an electricity price in "
                                                 "(0, 10] $ per kWh, got {:g}",
                                                 *r.usd_per_kwh));
  }
  if (r.demand_tokens_per_s && !(*r.demand_tokens_per_s > 0 && *r.demand_tokens_per_s <= 1e12)) {
    return FieldError("demand_tokens_per_s",
                      fmt::format("`demand_tokens_per_s` must be in (0, 1e12] tokens/s, got {:g}",
                                  *r.demand_tokens_per_s));
  }
  // Checked whether or not a demand uses it: a bad value is never silently ignored.
  if (!(r.target_utilization > 0 && r.target_utilization <= 1)) {
    return FieldError(
        "target_utilization",
        fmt::format("`target_utilization` must be in (0, 1], got {:g}", r.target_utilization));
  }
  if (r.rate && r.concurrency) {
    return FieldError("concurrency",
                      "`concurrency` and `rate` exclude each other: pick a closed "
                      "or an open loop");
  }
  if (r.rate) SW_RETURN_IF_ERROR(CheckRate(*r.rate));
  if (r.concurrency && (*r.concurrency < 1 || *r.concurrency > 10'000'000)) {
    return FieldError("concurrency", "`concurrency` must be between 1 and 10,000,000 clients");
  }
  return Status();
}

// Serves `d` at `load` with the request's run length and seed.
StatusOr<OperatingPoint> Point(const ModelSpec& model, const Deployment& d, const Workload& w,
                               const PlanLoad& load, double clients, const Slo& slo,
                               const PriceRequest& r) {
  Scenario s = LoadScenario(w, load, clients, slo);
  SW_RETURN_IF_ERROR(DrawLike(r.generator, s));
  s.requests = r.requests;
  s.seed = r.seed;
  SW_ASSIGN_OR_RETURN(const ServingRun run, Serve(model, d, s));
  OperatingPoint p = Summarize(run, d, load);
  if (load.kind == PlanLoad::Kind::kOffline) p.concurrency = clients;
  return p;
}

// The most closed-loop clients `d` holds within the SLOs (meeting them gets no easier with more
// clients): doubling from one, then bisection, up to the sequences the deployment runs at once.
StatusOr<std::pair<int64_t, OperatingPoint>> MostWithinSlo(const ModelSpec& model,
                                                           const Deployment& d, const Workload& w,
                                                           const Slo& slo, const PriceRequest& r) {
  SW_ASSIGN_OR_RETURN(const DeploymentEstimate e, EstimateDeployment(model, d, w));
  const Pool& decode = d.decode();
  const int64_t slots = std::max<int64_t>(1, e.decode().decode_batch * decode.Replicas());
  const auto at = [&](int64_t clients) {
    return Point(model, d, w,
                 PlanLoad{PlanLoad::Kind::kConcurrency, static_cast<double>(clients), {}}, 0, slo,
                 r);
  };
  SW_ASSIGN_OR_RETURN(OperatingPoint best, at(1));
  if (!best.meets_slo) {
    return FailedPrecondition(
        fmt::format("{} misses the SLOs even for one client: {} TTFT {} against {}, TPOT {} "
                    "against {}; relax the SLOs or use a faster deployment",
                    d.ToString(), slo.PercentileName(), FormatSeconds(best.ttft.at_slo_s),
                    FormatSeconds(slo.max_ttft_s), FormatSeconds(best.tpot.at_slo_s),
                    FormatSeconds(slo.max_tpot_s)),
        "max_ttft_ms");
  }
  int64_t lo = 1, hi = 0;  // lo meets; hi (when set) misses
  // Serves `n` clients and moves the bracket.
  const auto probe = [&](int64_t n) -> Status {
    SW_ASSIGN_OR_RETURN(OperatingPoint p, at(n));
    if (p.meets_slo) {
      lo = n;
      best = p;
    } else {
      hi = n;
    }
    return Status();
  };
  for (int64_t n = 2; hi == 0 && lo < slots; n = std::min(slots, 2 * n)) {
    SW_RETURN_IF_ERROR(probe(n));
  }
  while (hi - lo > 1) SW_RETURN_IF_ERROR(probe((lo + hi) / 2));
  return std::pair{lo, best};
}

// The deployment's best batch as plan ranks it (aggregated: plan's own operating point of the
// layout; disaggregated: as many clients as its analytic rate keeps in flight, as plan's split).
StatusOr<std::pair<double, OperatingPoint>> BestBatch(const ModelSpec& model,
                                                      const ClusterSpec& cluster,
                                                      const ServingOptions& options,
                                                      const Deployment& d, const Workload& w,
                                                      const LengthSpread& spread, const Slo& slo,
                                                      const PriceRequest& r) {
  // Plan's own operating point where plan would draw the same requests: its arrivals, router,
  // run length and seed (the lengths' spread it takes).
  const RequestGenerator& g = r.generator;
  if (!d.disaggregated() && r.requests == 0 && r.seed == 1 && !g.burstiness && g.router.empty()) {
    shardwise::PlanRequest req;
    req.load.lengths = spread;
    req.perf = d.prefill().perf;
    req.max_batch = options.max_batch;
    req.workload = w;
    req.slo = slo;
    req.top = 1;
    req.only_layout = d.prefill().layout;
    SW_ASSIGN_OR_RETURN(const PlanResult plan, shardwise::Plan(model, cluster, req));
    const PlanEntry& e = plan.ranked.front();
    return std::pair{static_cast<double>(e.estimate.workload.batch * e.estimate.layout.Replicas()),
                     *e.at_load};
  }
  SW_ASSIGN_OR_RETURN(const DeploymentEstimate e, EstimateDeployment(model, d, w));
  const double clients = std::max(
      1.0, std::ceil(e.capacity_requests_per_s *
                     (e.unloaded_ttft_s + static_cast<double>(w.output_tokens) * e.decode_tpot_s)));
  SW_ASSIGN_OR_RETURN(const OperatingPoint p, Point(model, d, w, PlanLoad{}, clients, slo, r));
  return std::pair{clients, p};
}

// The share of the bill spent on prompts: the prefill pool's (disaggregated), or the time a
// replica prefills at the operating point, its request rate x one prompt's instance time (at a
// replica's full load this is its batch's prefills over the batch's cycle).
double InputShare(const Deployment& d, const DeploymentEstimate& e, const OperatingPoint& p) {
  if (d.disaggregated()) return d.prefill().UsdPerHour() / d.UsdPerHour();
  const double replicas = static_cast<double>(d.prefill().Replicas());
  return std::min(1.0, p.requests_per_s / replicas * e.decode().at_batch.prefill_s_per_request);
}

}  // namespace

std::string_view PricedAtName(PricedAt at) {
  switch (at) {
    case PricedAt::kLoad:
      return "load";
    case PricedAt::kMostWithinSlo:
      return "most_within_slo";
    case PricedAt::kBestBatch:
      return "best_batch";
  }
  return "?";
}

StatusOr<PriceReport> Price(const Catalog& catalog, const PriceRequest& r) {
  SW_RETURN_IF_ERROR(CheckRequest(r));
  PriceReport rep;
  SW_ASSIGN_OR_RETURN(rep.model, catalog.Model(r.model));
  std::string profile_note;
  SW_ASSIGN_OR_RETURN(rep.cluster, catalog.Cluster(r.cluster, &profile_note));
  if (!profile_note.empty()) rep.notes.push_back(profile_note);
  const RequestGenerator& g = r.generator;
  SW_ASSIGN_OR_RETURN(const LengthSpread spread, ResolveLengthSpread(g.lengths));
  SW_ASSIGN_OR_RETURN(rep.options, ResolveServingOptions(catalog, rep.model, r.serving,
                                                         DrawnLengths(r.isl, r.osl, spread)));
  SW_ASSIGN_OR_RETURN(rep.slo, ResolveSlo(r.slo));
  Workload w;
  w.prompt_tokens = r.isl;
  w.output_tokens = r.osl;
  DeploymentSpec spec = r.deployment;
  if (spec.Empty()) {
    SW_ASSIGN_OR_RETURN(const Layout layout,
                        PlannersLayout(rep.model, rep.cluster, rep.options, w, spread, rep.slo));
    spec.layout = layout.ToString();
    rep.layout_chosen = true;
  }
  SW_ASSIGN_OR_RETURN(rep.deployment,
                      ResolveDeployment(catalog, rep.model, rep.cluster, rep.options, spec));
  const Deployment& d = rep.deployment;
  if (r.concurrency) SW_RETURN_IF_ERROR(CheckClients(*r.concurrency, d.gpus()));
  if (r.rate || r.concurrency) {
    rep.priced_at = PricedAt::kLoad;
    rep.load =
        r.rate ? PlanLoad{PlanLoad::Kind::kRate, *r.rate, {}}
               : PlanLoad{PlanLoad::Kind::kConcurrency, static_cast<double>(*r.concurrency), {}};
    SW_ASSIGN_OR_RETURN(rep.point, Point(rep.model, d, w, rep.load, 0, rep.slo, r));
  } else if (rep.slo.Given()) {
    rep.priced_at = PricedAt::kMostWithinSlo;
    SW_ASSIGN_OR_RETURN(const auto most, MostWithinSlo(rep.model, d, w, rep.slo, r));
    rep.load = PlanLoad{PlanLoad::Kind::kConcurrency, static_cast<double>(most.first), {}};
    rep.point = most.second;
  } else {
    rep.priced_at = PricedAt::kBestBatch;
    SW_ASSIGN_OR_RETURN(const auto best,
                        BestBatch(rep.model, rep.cluster, rep.options, d, w, spread, rep.slo, r));
    rep.offline_clients = best.first;
    rep.point = best.second;
  }
  rep.load.lengths = spread;  // as Point drew them (DrawLike of the same generator)
  SW_ASSIGN_OR_RETURN(rep.estimate, EstimateDeployment(rep.model, d, w));
  rep.saved = Save("price", r.model, r.cluster, r.serving, d, r.isl, r.osl);
  rep.saved.lengths = g.lengths;
  rep.saved.slo = r.slo;
  if (rep.load.kind == PlanLoad::Kind::kRate) {
    rep.saved.rate = rep.load.value;
    rep.saved.in_flight = rep.point.concurrency;
  } else {
    rep.saved.concurrency = std::llround(
        rep.load.kind == PlanLoad::Kind::kConcurrency ? rep.load.value : rep.offline_clients);
  }
  if (rep.point.overloaded) {
    return FailedPrecondition(fmt::format("{} falls behind a load of {:g} requests/s (it serves "
                                          "{}); price it at a lower `rate`",
                                          d.ToString(), rep.load.value,
                                          ServedShare(rep.point.requests_per_s, rep.load.value)),
                              "rate");
  }
  rep.usd_per_hour = d.UsdPerHour();
  rep.usd_per_mtok_output = rep.point.usd_per_mtok_output;
  rep.board_power_w = d.BoardPowerW();
  rep.joules_per_output_token = rep.point.joules_per_output_token;
  rep.usd_per_kwh = r.usd_per_kwh;
  if (r.usd_per_kwh && rep.board_power_w > 0) {
    rep.electricity_usd_per_mtok_output =
        ElectricityUsdPerMtok(rep.joules_per_output_token, *r.usd_per_kwh);
  }
  PriceInputs& in = rep.inputs;
  in.gpus_per_replica = d.gpus();
  in.usd_per_gpu_hour = rep.usd_per_hour / static_cast<double>(d.gpus());
  in.replica_output_tokens_per_s = rep.point.billed_output_tokens_per_s;
  in.replica_input_tokens_per_s =
      in.replica_output_tokens_per_s * static_cast<double>(r.isl) / static_cast<double>(r.osl);
  in.input_time_share = InputShare(d, rep.estimate, rep.point);
  rep.duty_cycle = r.duty_cycle;
  const double duty = DutyCycleMultiplier(r.duty_cycle);
  for (int pct = 10; pct <= 100; pct += 10) {
    PricePoint p = PriceAt(in, pct / 100.0);
    p.usd_per_mtok_output *= duty;
    p.usd_per_mtok_input_share *= duty;
    p.usd_per_mtok_output_share *= duty;
    rep.curve.push_back(p);
  }
  rep.api_usd_per_mtok_input = r.api_usd_per_mtok_input;
  rep.api_usd_per_mtok_output = r.api_usd_per_mtok_output;
  rep.break_even =
      BreakEvenUtilization(in, r.duty_cycle, r.api_usd_per_mtok_input, r.api_usd_per_mtok_output);
  if (r.demand_tokens_per_s) {
    SW_ASSIGN_OR_RETURN(rep.sizing,
                        SizeForDemand(in, *r.demand_tokens_per_s, r.target_utilization));
  }
  AddDeploymentNotes(d, rep.notes);
  if (std::string ep = DefaultEpExchangeNote(d, r.serving); !ep.empty()) {
    rep.notes.push_back(std::move(ep));
  }
  return rep;
}

}  // namespace shardwise::api
