// simulate's JSON (docs/json.md, simulate).
#include <cmath>

#include "json_parts.h"
#include "shardwise/api/json.h"

namespace shardwise::api {
namespace {

nlohmann::json LengthsJson(const Scenario& s) {
  if (!s.trace.empty()) return nullptr;
  return json::LengthsJson(s.input.mean, s.output.mean, SpreadOf(s));
}

}  // namespace

nlohmann::json ToJson(const ServingReport& rep) {
  const SimResult& r = rep.run.result;
  const ServingRun& run = rep.run;
  const Pool& decode = rep.deployment.decode();
  const bool closed = std::holds_alternative<ClosedLoop>(rep.scenario.load);
  nlohmann::json series = nlohmann::json::array();
  for (const auto& [t, f] : r.kv_occupancy) series.push_back({{"time_s", t}, {"fraction", f}});
  return {
      {"schema_version", kSchemaVersion},
      {"command", "simulate"},
      {"model", rep.model.name},
      {"cluster", rep.cluster.name},
      {"usd_per_gpu_hour", rep.cluster.gpu.usd_per_gpu_hour},
      {"layout", rep.deployment.ToString()},
      {"deployment", json::DeploymentJson(rep.deployment, &run.setup.estimate, rep.saved)},
      {"engine", decode.perf.engine.name},
      {"moe", json::MoeJson(rep.model, decode.layout, decode.perf)},
      {"speculative", json::SpeculativeJson(decode.perf.speculative)},
      {"prefix_hit_rate", decode.perf.prefix_hit_rate},
      {"concurrency", closed ? nlohmann::json(std::get<ClosedLoop>(rep.scenario.load).clients)
                             : nlohmann::json(nullptr)},
      {"lengths", LengthsJson(rep.scenario)},
      {"replicas", run.steady.replicas},
      {"gpus", rep.deployment.gpus()},
      {"seed", rep.scenario.seed},
      {"requests", r.requests},
      {"preemptions", r.preemptions},
      {"iterations", r.steps},
      {"makespan_s", r.makespan_s},
      {"steady_state", json::SteadyStateJson(run.steady)},
      {"load",
       {{"offered_requests_per_s", std::isfinite(run.offered_requests_per_s)
                                       ? nlohmann::json(run.offered_requests_per_s)
                                       : nlohmann::json(nullptr)},
        {"capacity_requests_per_s", run.setup.estimate.capacity_requests_per_s},
        {"served_requests_per_s", run.RequestsPerS()},
        {"overloaded", run.overloaded}}},
      {"throughput",
       {{"input_tokens_per_s", run.InputTokensPerS()},
        {"output_tokens_per_s", run.OutputTokensPerS()},
        {"output_tokens_per_s_per_gpu", rep.OutputTokensPerSPerGpu()},
        {"output_tokens_per_s_per_user", r.tpot_s.Mean() > 0 ? 1.0 / r.tpot_s.Mean() : 0.0},
        {"requests_per_s", run.RequestsPerS()},
        {"billed_output_tokens_per_s", run.BilledOutputTokensPerS()}}},
      {"ttft_s", json::DistributionJson(r.ttft_s, run.slo, rep.bands.ttft)},
      {"tpot_s", json::DistributionJson(r.tpot_s, run.slo, rep.bands.tpot)},
      {"client_phase", json::ClientPhaseJson(r.ttft_s.Mean(), r.tpot_s.Mean(), run.out_of_phase)},
      {"measured_spread",
       json::MeasuredSpreadJson(rep.bands, decode.perf.engine, decode.cluster.gpu.name)},
      {"assumed_inputs", rep.bands.assumed_inputs},
      {"itl_s", json::DistributionJson(r.itl_s, run.slo)},
      {"e2e_s", json::DistributionJson(r.e2e_s, run.slo)},
      {"slo", json::SloJson(run.slo)},
      {"meets_slo", run.slo.Given() ? nlohmann::json(run.MeetsSlo()) : nlohmann::json(nullptr)},
      {"goodput", run.slo.Given()
                      ? nlohmann::json{{"request_fraction", rep.GoodputRequestFraction()},
                                       {"output_tokens_per_s", rep.GoodputOutputTokensPerS()}}
                      : nlohmann::json(nullptr)},
      {"utilization", {{"busy_fraction", r.utilization}, {"mfu", r.mfu}}},
      {"kv_transfer_s", rep.deployment.disaggregated()
                            ? nlohmann::json{{"mean", r.kv_transfer_s_mean}}
                            : nlohmann::json(nullptr)},
      {"kv_occupancy",
       {{"mean_fraction", r.kv_occupancy_mean},
        {"max_fraction", r.kv_occupancy_max},
        {"series", series}}},
      {"cost",
       {{"usd_per_mtok_output", r.usd_per_mtok_output},
        {"usd_per_hour", rep.deployment.UsdPerHour()},
        {"usd_per_gpu_hour", rep.cluster.gpu.usd_per_gpu_hour}}},
      {"energy",
       {{"board_power_w", rep.deployment.BoardPowerW()},
        {"joules_per_output_token", rep.JoulesPerOutputToken()},
        {"basis", kEnergyBasis}}},
      {"notes", rep.notes}};
}

}  // namespace shardwise::api
