#include "shardwise/plan/load.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "shardwise/price/energy.h"
#include "shardwise/price/price.h"

namespace shardwise {

LatencySummary Summarize(const Samples& h, const Slo& slo) {
  return {h.Mean(), h.Percentile(50), h.Percentile(90), h.Percentile(99), h.Max(), slo.At(h)};
}

std::string ServedShare(double served_per_s, double offered_per_s) {
  if (served_per_s < 0.01 * offered_per_s) return "under 1% of it";
  // Overloaded while the window's throughput kept up: its queue had not settled ("12.3" would
  // read as keeping up with 12).
  if (served_per_s >= offered_per_s) {
    return fmt::format("{:.3g}, yet its queue still grows through the run", served_per_s);
  }
  return fmt::format("{:.3g}", served_per_s);
}

Scenario LoadScenario(const Workload& w, const PlanLoad& load, double offline_clients,
                      const Slo& slo) {
  Scenario s;
  s.input = {load.lengths.input, static_cast<double>(w.prompt_tokens), load.lengths.cv};
  s.output = {load.lengths.output, static_cast<double>(w.output_tokens), load.lengths.cv};
  s.out_of_phase = false;
  s.slo = slo;
  switch (load.kind) {
    case PlanLoad::Kind::kOffline:
      s.load = ClosedLoop{std::max<int64_t>(1, std::llround(offline_clients))};
      break;
    case PlanLoad::Kind::kConcurrency:
      s.load = ClosedLoop{std::max<int64_t>(1, std::llround(load.value))};
      break;
    case PlanLoad::Kind::kRate:
      s.load = OpenLoop{load.value, 1.0};
      break;
  }
  return s;
}

OperatingPoint Summarize(const ServingRun& run, const Deployment& d, const PlanLoad& load) {
  const SimResult& r = run.result;
  OperatingPoint p;
  p.requests_simulated = r.requests;
  p.ttft = Summarize(r.ttft_s, run.slo);
  p.tpot = Summarize(r.tpot_s, run.slo);
  p.requests_per_s = run.RequestsPerS();
  p.output_tokens_per_s = run.OutputTokensPerS();
  p.output_tokens_per_s_per_gpu = p.output_tokens_per_s / static_cast<double>(d.gpus());
  p.output_tokens_per_s_per_user = p.tpot.mean_s > 0 ? 1.0 / p.tpot.mean_s : 0;
  p.billed_output_tokens_per_s = run.BilledOutputTokensPerS();
  p.billed_output_tokens_per_s_per_gpu =
      p.billed_output_tokens_per_s / static_cast<double>(d.gpus());
  p.usd_per_mtok_output = UsdPerMtok(d.UsdPerHour(), p.billed_output_tokens_per_s);
  p.joules_per_output_token = JoulesPerToken(d.BoardPowerW(), p.billed_output_tokens_per_s);
  p.overloaded = run.overloaded;
  p.meets_slo = run.MeetsSlo();
  p.steady = run.steady;
  // An open loop's requests in flight by Little's law; a closed loop's are its clients.
  p.concurrency =
      load.kind == PlanLoad::Kind::kRate ? p.requests_per_s * r.e2e_s.Mean() : load.value;
  return p;
}

StatusOr<OperatingPoint> SimulateOperatingPoint(const ModelSpec& model, const Deployment& d,
                                                const Workload& w, const PlanLoad& load,
                                                double offline_clients, const Slo& slo) {
  const Scenario s = LoadScenario(w, load, offline_clients, slo);
  SW_ASSIGN_OR_RETURN(const ServingRun run, Serve(model, d, s));
  OperatingPoint p = Summarize(run, d, load);
  if (load.kind == PlanLoad::Kind::kOffline) p.concurrency = std::round(offline_clients);
  return p;
}

StatusOr<OutOfPhase> SimulateOutOfPhasePoint(const ModelSpec& model, const Deployment& d,
                                             const Workload& w, const PlanLoad& load,
                                             double offline_clients) {
  const Scenario s = OutOfPhaseScenario(LoadScenario(w, load, offline_clients, Slo{}));
  SW_ASSIGN_OR_RETURN(const ServingRun run, Serve(model, d, s));
  return OutOfPhaseOf(run);
}

}  // namespace shardwise
