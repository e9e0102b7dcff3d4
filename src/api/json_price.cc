// price's, recommend's and size's JSON (docs/json.md).
#include "json_parts.h"
#include "shardwise/api/json.h"
#include "shardwise/price/energy.h"

namespace shardwise::api {
namespace {

nlohmann::json PricePointJson(const PricePoint& p) {
  return {{"utilization", p.utilization},
          {"usd_per_mtok_output", p.usd_per_mtok_output},
          {"usd_per_mtok_input_share", p.usd_per_mtok_input_share},
          {"usd_per_mtok_output_share", p.usd_per_mtok_output_share}};
}

// A candidate recommend simulated; its latencies carry their stated bands' "low" and "high"
// around the mean and "at_slo_high", how high the SLO's percentile reaches within the band.
nlohmann::json CandidateJson(const RecommendCandidate& c) {
  const Deployment& d = c.deployment;
  nlohmann::json j = {{"cluster", c.cluster},
                      {"gpu", d.decode().cluster.gpu.name},
                      {"gpus", d.gpus()},
                      {"layout", d.ToString()},
                      {"disaggregated", d.disaggregated()},
                      {"replicas", d.decode().Replicas()},
                      {"capacity_requests_per_s", c.capacity_requests_per_s},
                      {"rate_requests_per_s", c.rate_per_s},
                      {"meets_slo", c.meets},
                      {"note", c.note},
                      {"at_load", nullptr},
                      {"usd_per_mtok_output", nullptr}};
  if (c.point) {
    j["at_load"] = json::OperatingPointJson(*c.point, std::nullopt);
    const auto band = [&c](const BandSpec LoadBands::*which) {
      return c.bands ? std::optional<BandSpec>((*c.bands).*which) : std::nullopt;
    };
    j["ttft_s"] = json::LatencyJson(c.point->ttft, band(&LoadBands::ttft));
    j["tpot_s"] = json::LatencyJson(c.point->tpot, band(&LoadBands::tpot));
    if (c.bands) {
      j["ttft_s"]["at_slo_high"] = c.reach.ttft_s;
      j["tpot_s"]["at_slo_high"] = c.reach.tpot_s;
      j["meets_slo_across_bands"] = c.meets && c.reach.holds;
    }
    if (c.meets) j["usd_per_mtok_output"] = c.point->usd_per_mtok_output;
  }
  return j;
}

}  // namespace

nlohmann::json ToJson(const PriceReport& rep) {
  const Deployment& d = rep.deployment;
  const PricePoint full = PriceAt(rep.inputs, 1.0);
  const double duty = DutyCycleMultiplier(rep.duty_cycle);
  nlohmann::json curve = nlohmann::json::array();
  for (const PricePoint& p : rep.curve) curve.push_back(PricePointJson(p));
  PricePoint at_duty = full;
  at_duty.usd_per_mtok_output *= duty;
  at_duty.usd_per_mtok_input_share *= duty;
  at_duty.usd_per_mtok_output_share *= duty;
  const BreakEven& b = rep.break_even;
  nlohmann::json out = {
      {"schema_version", kSchemaVersion},
      {"command", "price"},
      {"model", rep.model.name},
      {"cluster", rep.cluster.name},
      {"layout", d.ToString()},
      {"deployment", json::DeploymentJson(d, &rep.estimate, rep.saved)},
      {"gpus", d.gpus()},
      {"isl", rep.saved.isl},
      {"osl", rep.saved.osl},
      {"lengths", json::LengthsJson(static_cast<double>(rep.saved.isl),
                                    static_cast<double>(rep.saved.osl), rep.load.lengths)},
      {"moe", json::MoeJson(rep.model, d.decode().layout, d.decode().perf)},
      {"speculative", json::SpeculativeJson(d.decode().perf.speculative)},
      {"prefix_hit_rate", d.decode().perf.prefix_hit_rate},
      {"slo", json::SloJson(rep.slo)},
      {"operating_point",
       {{"priced_at", std::string(PricedAtName(rep.priced_at))},
        {"point", json::OperatingPointJson(rep.point, std::nullopt)}}},
      {"usd_per_hour", rep.usd_per_hour},
      {"usd_per_gpu_hour", rep.inputs.usd_per_gpu_hour},
      {"usd_per_mtok_output", rep.usd_per_mtok_output},
      {"energy",
       {{"board_power_w", rep.board_power_w},
        {"joules_per_output_token", rep.joules_per_output_token},
        {"usd_per_kwh", json::Optional(rep.usd_per_kwh)},
        {"electricity_usd_per_mtok_output", json::Optional(rep.electricity_usd_per_mtok_output)},
        {"basis", kEnergyBasis}}},
      {"billed",
       {{"input_tokens_per_s", rep.inputs.replica_input_tokens_per_s},
        {"output_tokens_per_s", rep.inputs.replica_output_tokens_per_s}}},
      {"input_time_share", rep.inputs.input_time_share},
      {"duty_cycle", {{"fraction", rep.duty_cycle}, {"cost_multiplier", duty}}},
      {"full_load", PricePointJson(full)},
      {"at_duty_cycle", PricePointJson(at_duty)},
      {"curve", curve},
      {"break_even",
       {{"api_usd_per_mtok_input", json::Optional(rep.api_usd_per_mtok_input)},
        {"api_usd_per_mtok_output", json::Optional(rep.api_usd_per_mtok_output)},
        {"input_utilization", json::Optional(b.input)},
        {"output_utilization", json::Optional(b.output)},
        {"bill_utilization", json::Optional(b.bill)}}},
      {"demand", nullptr},
      {"notes", rep.notes}};
  if (rep.sizing) {
    const DemandSizing& s = *rep.sizing;
    out["demand"] = {{"output_tokens_per_s", s.demand_output_tokens_per_s},
                     {"target_utilization", s.target_utilization},
                     {"deployments", s.replicas},
                     {"gpus", s.gpus},
                     {"utilization", s.utilization}};
  }
  return out;
}

nlohmann::json ToJson(const RecommendReport& rep) {
  const shardwise::RecommendRequest& req = rep.request;
  nlohmann::json all = nlohmann::json::array();
  for (const RecommendCandidate& c : rep.result.tried) all.push_back(CandidateJson(c));
  const std::optional<size_t> held = rep.holds_across_bands;
  nlohmann::json names = nlohmann::json::array();
  for (const NamedCluster& c : rep.clusters) names.push_back(c.name);
  nlohmann::json unsimulated = nlohmann::json::array();
  for (const auto& [cluster, why] : rep.result.unsimulated) {
    unsimulated.push_back({{"cluster", cluster}, {"why", why}});
  }
  const RecommendCandidate& best = *rep.result.best;
  return {{"schema_version", kSchemaVersion},
          {"command", "recommend"},
          {"model", rep.model.name},
          {"cluster", best.cluster},
          {"gpu", best.deployment.decode().cluster.gpu.name},
          {"usd_per_gpu_hour", best.deployment.decode().cluster.gpu.usd_per_gpu_hour},
          {"clusters_considered", names},
          {"clusters_not_simulated", unsimulated},
          {"objective", req.objective == RecommendObjective::kCost ? "cost" : "gpus"},
          {"mode", req.rate_per_s > 0 ? "fewest_gpus" : "most_load"},
          {"isl", req.plan.workload.prompt_tokens},
          {"osl", req.plan.workload.output_tokens},
          {"lengths", json::LengthsJson(static_cast<double>(req.plan.workload.prompt_tokens),
                                        static_cast<double>(req.plan.workload.output_tokens),
                                        req.plan.load.lengths)},
          {"slo", json::SloJson(req.plan.slo)},
          {"rate_requests_per_s",
           req.rate_per_s > 0 ? nlohmann::json(req.rate_per_s) : nlohmann::json(nullptr)},
          {"simulations", rep.result.simulations},
          {"elapsed_s", rep.elapsed_s},
          {"candidates", all},
          {"recommendation", CandidateJson(best)},
          {"holds_across_bands",
           held ? CandidateJson(rep.result.tried[*held]) : nlohmann::json(nullptr)},
          {"deployment", json::DeploymentJson(best.deployment, &rep.estimate, rep.saved)},
          {"notes", rep.notes}};
}

nlohmann::json ToJson(const SizeReport& rep) {
  const SizingRequest& req = rep.request;
  const SizingResult& r = rep.result;
  nlohmann::json ladder = nlohmann::json::array();
  for (const SizingStep& s : r.ladder) {
    ladder.push_back({{"gpus", s.gpus}, {"capacity_bytes", s.capacity_bytes}, {"fits", s.fits}});
  }
  return {{"schema_version", kSchemaVersion},
          {"command", "size"},
          {"model", rep.model.name},
          {"gpu", rep.gpu.name},
          {"dtype", DtypeName(req.weight_dtype)},
          {"weight_formats", rep.weight_formats},
          {"kv_dtype", DtypeName(req.kv_dtype)},
          {"gpu_memory_utilization", req.usable_fraction},
          {"kv_allowance", json::Optional(req.kv_allowance)},
          {"context_tokens", req.context_tokens},
          {"concurrency", req.concurrency},
          {"gpus", r.gpus},
          {"nodes", r.nodes},
          {"required_bytes", r.required_bytes},
          {"weight_bytes", r.weight_bytes},
          {"kv_bytes", r.kv_bytes},
          {"capacity_bytes", r.capacity_bytes},
          {"ladder", ladder}};
}

}  // namespace shardwise::api
