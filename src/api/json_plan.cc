// plan's JSON (docs/json.md, plan).
#include "json_parts.h"
#include "shardwise/api/json.h"

namespace shardwise::api {
namespace {

nlohmann::json EntryJson(const PlanEntry& p) {
  const StepEstimate& e = p.estimate;
  return {{"layout", e.layout.ToString()},
          {"gpus", e.layout.gpus()},
          {"dp", e.layout.dp},
          {"tp", e.layout.tp},
          {"pp", e.layout.pp},
          {"ep", e.layout.ep},
          {"etp", e.layout.ExpertTp()},
          {"cp", e.layout.cp},
          {"replicas", e.layout.Replicas()},
          {"batch", e.workload.batch},
          {"isl", e.workload.prompt_tokens},
          {"osl", e.workload.output_tokens},
          {"unloaded_ttft_s", e.ttft_s},
          {"decode_tpot_s", e.tpot_s},
          {"output_tokens_per_s", e.output_tokens_per_s},
          {"output_tokens_per_s_per_gpu", e.output_tokens_per_s_per_gpu},
          {"output_tokens_per_s_per_user", e.output_tokens_per_s_per_user},
          {"usd_per_mtok_output", p.usd_per_mtok_output},
          {"joules_per_output_token", p.joules_per_output_token},
          {"memory_per_gpu_bytes", e.memory.UsedBytes()},
          {"max_sequences", e.memory.max_sequences},
          {"bound", e.bound},
          {"limited_by", p.limited_by},
          {"over_parallelised", e.over_parallelised},
          {"why", p.why},
          {"prefill", json::PhaseJson(e.prefill)},
          {"decode", json::PhaseJson(e.decode)},
          {"ep_exchange", e.layout.ep > 1 ? json::EpSettingJson(p.ep) : nlohmann::json(nullptr)},
          {"pipeline", json::PipelineJson(e)}};
}

// A ranked entry: the step model's figures, and what the simulation found at the load.
nlohmann::json RankedJson(const PlanEntry& p, const LoadBands& bands) {
  nlohmann::json j = EntryJson(p);
  if (!p.at_load) return j;
  const OperatingPoint& a = *p.at_load;
  j.update(json::OperatingPointJson(a, bands));
  j["client_phase"] = json::ClientPhaseJson(a.ttft.mean_s, a.tpot.mean_s, a.out_of_phase);
  j["assumed_inputs"] = bands.assumed_inputs;
  j["requests_simulated_per_replica"] = a.requests_simulated;
  return j;
}

nlohmann::json DisaggEntryJson(const DisaggPlanEntry& e) {
  const Deployment& d = e.deployment;
  const Pool& pp = d.prefill();
  const Pool& dp = d.decode();
  nlohmann::json j = {
      {"name", d.ToString()},
      {"gpus", d.gpus()},
      {"prefill",
       {{"layout", pp.layout.ToString()},
        {"workers", pp.workers},
        {"gpus", pp.Gpus()},
        {"unloaded_ttft_s", e.prefill.ttft_s},
        {"requests_per_s", e.prefill_requests_per_s},
        {"ep_exchange", pp.layout.ep > 1 ? json::EpSettingJson(e.prefill_ep) : nullptr},
        {"phase", json::PhaseJson(e.prefill.prefill)}}},
      {"decode",
       {{"layout", dp.layout.ToString()},
        {"workers", dp.workers},
        {"gpus", dp.Gpus()},
        {"batch_per_worker", e.decode.workload.batch},
        {"decode_tpot_s", e.decode.tpot_s},
        {"requests_per_s", e.decode_requests_per_s},
        {"ep_exchange", dp.layout.ep > 1 ? json::EpSettingJson(e.decode_ep) : nullptr},
        {"phase", json::PhaseJson(e.decode.decode)}}},
      {"kv_transfer",
       {{"mode", std::string(KvTransferModeName(d.transfer()))},
        {"link", e.link.name},
        {"exposed_s_per_prompt_token", e.transfer.exposed_s_per_token},
        {"latency_s", e.transfer.latency_s}}},
      {"unloaded_ttft_s", e.ttft_s},
      {"decode_tpot_s", e.tpot_s},
      {"output_tokens_per_s", e.output_tokens_per_s},
      {"output_tokens_per_s_per_gpu", e.output_tokens_per_s_per_gpu},
      {"why", e.why}};
  if (e.at_load) j["at_load"] = json::OperatingPointJson(*e.at_load, std::nullopt);
  return j;
}

std::string_view LoadName(PlanLoad::Kind kind) {
  switch (kind) {
    case PlanLoad::Kind::kOffline:
      return "offline";
    case PlanLoad::Kind::kConcurrency:
      return "concurrency";
    case PlanLoad::Kind::kRate:
      return "rate";
  }
  return "?";
}

}  // namespace

nlohmann::json ToJson(const PlanReport& rep) {
  const shardwise::PlanRequest& req = rep.request;
  nlohmann::json layouts = nlohmann::json::array();
  for (size_t i = 0; i < rep.result.ranked.size(); ++i) {
    layouts.push_back(RankedJson(rep.result.ranked[i], rep.bands[i]));
  }
  nlohmann::json pareto = nlohmann::json::array();
  for (const PlanEntry& p : rep.result.pareto) pareto.push_back(EntryJson(p));
  const bool closed = req.load.kind == PlanLoad::Kind::kConcurrency;
  const LoadBands spread_bands{{}, {}, {}, closed};
  return {
      {"schema_version", kSchemaVersion},
      {"command", "plan"},
      {"model", rep.model.name},
      {"cluster", rep.cluster.name},
      {"isl", req.workload.prompt_tokens},
      {"osl", req.workload.output_tokens},
      {"lengths",
       json::LengthsJson(static_cast<double>(req.workload.prompt_tokens),
                         static_cast<double>(req.workload.output_tokens), req.load.lengths)},
      {"slo", json::SloJson(req.slo)},
      {"roofline", json::RooflineJson(rep.model, rep.cluster, req.perf)},
      {"cluster_tree", json::ClusterTreeJson(rep.cluster)},
      {"gpus", rep.cluster.num_gpus},
      {"gpu", rep.cluster.gpu.name},
      {"usd_per_gpu_hour", rep.cluster.gpu.usd_per_gpu_hour},
      {"objective", ObjectiveName(req.objective)},
      {"engine", req.perf.engine.name},
      {"load", LoadName(req.load.kind)},
      {"load_value", req.load.kind == PlanLoad::Kind::kOffline ? nlohmann::json(nullptr)
                                                               : nlohmann::json(req.load.value)},
      {"dtype", DtypeName(req.perf.weight_dtype)},
      {"weight_formats", WeightFormatName(req.perf)},
      {"kv_dtype", DtypeName(req.perf.kv_dtype)},
      {"redundant_experts", req.perf.redundant_experts},
      {"speculative", json::SpeculativeJson(req.perf.speculative)},
      {"prefix_hit_rate", req.perf.prefix_hit_rate},
      {"expert_skew", json::Optional(req.perf.expert_skew)},
      {"layouts_considered", rep.result.layouts_considered},
      {"layouts_fitting", rep.result.layouts_fitting},
      {"points_evaluated", rep.result.points_evaluated},
      {"elapsed_s", rep.elapsed_s},
      {"layouts", layouts},
      {"measured_spread",
       json::MeasuredSpreadJson(spread_bands, req.perf.engine, rep.cluster.gpu.name)},
      {"pareto", pareto},
      {"disaggregated",
       rep.disaggregated ? DisaggEntryJson(*rep.disaggregated) : nlohmann::json(nullptr)},
      {"verdict",
       {{"winner", rep.verdict.disaggregated_wins ? "disaggregated" : "aggregated"},
        {"why", rep.verdict.why}}},
      {"deployment", json::DeploymentJson(rep.winner, &rep.winner_estimate, rep.saved)},
      {"notes", rep.notes}};
}

}  // namespace shardwise::api
