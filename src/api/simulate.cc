#include "shardwise/api/simulate.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "layout_choice.h"
#include "shardwise/api/plan.h"
#include "shardwise/plan/planner.h"
#include "shardwise/sim/degenerate.h"

namespace shardwise::api {
namespace {

constexpr double kDefaultRatePerS = 10;

// Checks the load's options against each other: one loop, and only its own knobs.
Status CheckLoad(const SimulateRequest& r) {
  if (r.concurrency) {
    if (*r.concurrency < 1 || *r.concurrency > 10'000'000) {
      return FieldError(
          "concurrency",
          fmt::format("`concurrency` must be between 1 and 10,000,000 clients, got {}",
                      *r.concurrency));
    }
    if (!r.workload.trace.empty()) {
      return FieldError("concurrency",
                        "`concurrency` and `trace` exclude each other: a trace "
                        "fixes the arrival times");
    }
    if (r.rate) {
      return FieldError("concurrency",
                        "`concurrency` and `rate` exclude each other: pick a "
                        "closed or an open loop");
    }
    if (r.burstiness) {
      return FieldError("burstiness",
                        "`burstiness` shapes open-loop arrivals, which a closed "
                        "loop (`concurrency`) has none of: drop one of them");
    }
  }
  if (!r.workload.trace.empty()) {
    // A trace fixes every arrival and length: the knobs of a generated load would be ignored.
    const char* knob = r.rate             ? "rate"
                       : r.burstiness     ? "burstiness"
                       : r.requests > 0   ? "requests"
                       : r.duration_s > 0 ? "duration"
                                          : nullptr;
    if (knob) {
      return FieldError(knob, fmt::format("`{}` and `trace` exclude each other: a trace fixes "
                                          "the arrivals and lengths of its requests",
                                          knob));
    }
  }
  // +inf: offline (everything at t = 0); anything else is an arrival rate.
  if (r.rate && *r.rate != std::numeric_limits<double>::infinity()) {
    SW_RETURN_IF_ERROR(CheckRate(*r.rate));
  }
  if (r.requests < 0 || r.requests > kMaxRunRequests) {
    return FieldError("requests",
                      fmt::format("`requests` must be between 1 and {}", kMaxRunRequests));
  }
  if (!(r.duration_s >= 0) || !std::isfinite(r.duration_s)) {
    return FieldError("duration", "`duration` must be positive seconds");
  }
  // A cutoff brings about rate x duration arrivals: at most a run's worth.
  if (r.duration_s > 0 && r.rate && std::isfinite(*r.rate) &&
      *r.rate * r.duration_s > static_cast<double>(kMaxRunRequests)) {
    return FieldError("duration",
                      fmt::format("`duration` {:g} s at {:g} requests/s brings {:.3g} requests, "
                                  "more than the {} one run simulates: shorten it",
                                  r.duration_s, *r.rate, *r.rate * r.duration_s, kMaxRunRequests));
  }
  return Status();
}

// A layout that leaves cluster GPUs idle, and the data-parallel layout that would use them all.
std::string IdleGpusNote(const Deployment& d, const ClusterSpec& cluster) {
  if (d.disaggregated() || d.gpus() >= cluster.num_gpus) return "";
  const Layout& layout = d.prefill().layout;
  std::string more;
  if (cluster.num_gpus % layout.gpus() == 0 && layout.ep == 1) {
    Layout wider = layout;
    wider.dp *= cluster.num_gpus / layout.gpus();
    if (ParseLayout(wider.ToString()).ok()) {
      more = fmt::format("; `layout` {} would use them all", wider.ToString());
    }
  }
  return fmt::format("layout {} uses {} of the cluster's {} GPUs{}", layout.ToString(),
                     layout.gpus(), cluster.num_gpus, more);
}

}  // namespace

Status DrawLike(const RequestGenerator& g, Scenario& s) {
  SW_ASSIGN_OR_RETURN(const LengthSpread spread, ResolveLengthSpread(g.lengths));
  s.input = {spread.input, s.input.mean, spread.cv};
  s.output = {spread.output, s.output.mean, spread.cv};
  if (auto* open = std::get_if<OpenLoop>(&s.load); open && g.burstiness) {
    if (!(*g.burstiness > 0 && *g.burstiness <= 100)) {
      return FieldError("burstiness", "`burstiness` must be in (0, 100]");
    }
    open->burstiness_cv = *g.burstiness;
  }
  if (!g.router.empty()) {
    SW_ASSIGN_OR_RETURN(RouterPolicy router, ParseRouter(g.router));
    s.router = router;
  }
  return Status();
}

StatusOr<Scenario> ResolveScenario(const SimulateRequest& r) {
  SW_RETURN_IF_ERROR(CheckLoad(r));
  const WorkloadRequest& w = r.workload;
  Scenario s;
  if (w.isl < 1 || w.isl > 10'000'000 || w.osl < 1 || w.osl > 10'000'000) {
    return FieldError(w.isl < 1 || w.isl > 10'000'000 ? "isl" : "osl",
                      "`isl` and `osl` must be between 1 and 10,000,000");
  }
  s.input.mean = static_cast<double>(w.isl);
  s.output.mean = static_cast<double>(w.osl);
  if (!w.trace.empty()) {
    StatusOr<std::vector<TraceRequest>> trace = LoadTrace(w.trace);
    if (!trace.ok()) return trace.status().WithField("trace");
    s.trace = std::move(trace).value();
  }
  if (r.concurrency) {
    s.load = ClosedLoop{*r.concurrency};
  } else {
    s.load = OpenLoop{r.rate.value_or(kDefaultRatePerS), 1.0};
  }
  SW_RETURN_IF_ERROR(DrawLike({w.lengths, r.burstiness, r.router}, s));
  s.requests = r.requests;
  s.seed = r.seed;
  s.stop_after_s = r.duration_s > 0 ? r.duration_s : std::numeric_limits<double>::infinity();
  SW_ASSIGN_OR_RETURN(s.slo, ResolveSlo(r.slo));
  s.progress = r.progress;
  return s;
}

StatusOr<ServingReport> Simulate(const Catalog& catalog, const SimulateRequest& r) {
  ServingReport rep;
  SW_ASSIGN_OR_RETURN(rep.scenario, ResolveScenario(r));
  SW_ASSIGN_OR_RETURN(rep.model, catalog.Model(r.model));
  std::string profile_note;
  SW_ASSIGN_OR_RETURN(rep.cluster, catalog.Cluster(r.cluster, &profile_note));
  if (!profile_note.empty()) rep.notes.push_back(profile_note);
  const Workload one = ScenarioLengths(rep.scenario);
  const RequestLengths lengths{one.prompt_tokens,
                               one.output_tokens,
                               LongestRequest(rep.scenario),
                               "isl",
                               !rep.scenario.trace.empty()      ? LongestFrom::kTrace
                               : SpreadOf(rep.scenario).Fixed() ? LongestFrom::kMeans
                                                                : LongestFrom::kSpread,
                               LongestPrompt(rep.scenario)};
  SW_ASSIGN_OR_RETURN(rep.options, ResolveServingOptions(catalog, rep.model, r.serving, lengths));
  // The simulation's own time, for the user: a layout comparison included.
  const auto start = std::chrono::steady_clock::now();
  DeploymentSpec spec = r.deployment;
  std::optional<ServingRun> chosen_run;  // the kept layout's run, where a comparison served it
  if (spec.Empty()) {
    SW_ASSIGN_OR_RETURN(LayoutChoice choice, ChooseLayout(catalog, rep, one, lengths, rep.notes));
    spec.layout = std::move(choice.layout);
    chosen_run = std::move(choice.run);
    rep.layout_chosen = true;
  }
  SW_ASSIGN_OR_RETURN(rep.deployment,
                      ResolveDeployment(catalog, rep.model, rep.cluster, rep.options, spec));
  if (r.concurrency) SW_RETURN_IF_ERROR(CheckClients(*r.concurrency, rep.deployment.gpus()));
  rep.saved = Save("simulate", r.model, r.cluster, r.serving, rep.deployment, one.prompt_tokens,
                   one.output_tokens);
  if (r.concurrency) {
    rep.saved.concurrency = r.concurrency;
  } else if (!r.workload.trace.empty()) {
    // Its offered rate is saved after the run; the path absolute, so a replay from another
    // directory reads the same file.
    std::error_code ec;
    const std::filesystem::path absolute = std::filesystem::absolute(r.workload.trace, ec);
    rep.saved.trace = ec ? r.workload.trace : absolute.string();
  } else if (const auto* open = std::get_if<OpenLoop>(&rep.scenario.load)) {
    if (std::isfinite(open->rate_per_s)) rep.saved.rate = open->rate_per_s;
    rep.saved.offline = std::isinf(open->rate_per_s);
  }
  rep.saved.slo = r.slo;
  rep.saved.lengths = r.workload.lengths;
  rep.saved.burstiness = r.burstiness;
  rep.saved.seed = r.seed;
  rep.saved.router = r.router;
  if (chosen_run) {
    rep.run = std::move(*chosen_run);
  } else {
    SW_ASSIGN_OR_RETURN(
        const ServingSetup setup,
        PrepareServing(rep.model, rep.deployment, one, lengths.Longest(), Offered(rep.scenario)));
    SW_ASSIGN_OR_RETURN(rep.run, Serve(rep.model, setup, rep.scenario));
  }
  if (rep.run.result.requests == 0) {
    return FieldError("duration",
                      fmt::format("no request finished within `duration` ({:g} s): lengthen it "
                                  "past one request's end-to-end time, or drop it",
                                  r.duration_s));
  }
  rep.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // A trace's offered rate, for price and explain of the saved run (simulate replays the trace).
  if (!rep.saved.trace.empty() && std::isfinite(rep.run.offered_requests_per_s)) {
    rep.saved.rate = rep.run.offered_requests_per_s;
  }
  // An open loop's requests in flight (Little's law), for explain of the saved run.
  if (rep.saved.rate) rep.saved.in_flight = rep.run.RequestsPerS() * rep.run.result.e2e_s.Mean();
  rep.scenario.progress = nullptr;
  // A closed loop of aggregated replicas is what the serving validation measured: its bands also
  // cover where those measurements fell.
  rep.bands = DeploymentBands(rep.deployment, rep.run.setup.estimate, rep.run.out_of_phase,
                              std::holds_alternative<ClosedLoop>(rep.scenario.load));
  AddDeploymentNotes(rep.deployment, rep.notes);
  if (std::string ep = DefaultEpExchangeNote(rep.deployment, r.serving); !ep.empty()) {
    rep.notes.push_back(std::move(ep));
  }
  if (std::string degenerate = DegenerateRunNote(rep.run); !degenerate.empty()) {
    rep.notes.push_back(std::move(degenerate));
  }
  if (std::string stalled = StalledPipelineNote(rep.run); !stalled.empty()) {
    rep.notes.push_back(std::move(stalled));
  }
  if (rep.run.out_of_phase && !rep.run.out_of_phase->settled) {
    rep.notes.push_back(
        "the clients out of phase did not settle (the window's halves still differ after the "
        "longest run): that edge of the band is the last run's mean");
  }
  if (rep.run.out_of_phase_failed) {
    rep.notes.push_back(
        "the clients out of phase need longer requests than the KV cache holds; the band covers "
        "the lockstep loop only");
  }
  if (!rep.layout_chosen) {
    const std::string idle = IdleGpusNote(rep.deployment, rep.cluster);
    if (!idle.empty()) rep.notes.push_back(idle);
  }
  return rep;
}

}  // namespace shardwise::api
