#include "json_parts.h"

#include <algorithm>
#include <cmath>

#include "shardwise/perf/moe.h"
#include "shardwise/perf/roofline.h"
#include "shardwise/perf/speculative.h"

namespace shardwise::api::json {
namespace {

// Percentiles of the cdf series: every 5th, the 1st and the 99th.
constexpr double kCdf[] = {1,  5,  10, 15, 20, 25, 30, 35, 40, 45, 50,
                           55, 60, 65, 70, 75, 80, 85, 90, 95, 99};

void AddBand(nlohmann::json& latency, const std::optional<BandSpec>& band) {
  if (!band) return;
  const Band b = LatencyBand(latency["mean"].get<double>(), *band);
  latency["low"] = b.low;
  latency["high"] = b.high;
}

// {"p10", "p90", "source"} of the engine profile's fields "<prefix>_p10" and "<prefix>_p90".
nlohmann::json RatiosJson(const EngineProfile& engine, const MeasuredRatios& r,
                          const std::string& prefix) {
  const auto source = engine.sources.find(prefix + "_p10");
  return {{"p10", r.p10},
          {"p90", r.p90},
          {"source", source != engine.sources.end() ? source->second : std::string()}};
}

}  // namespace

nlohmann::json Optional(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

nlohmann::json Limit(double limit_s) {
  return std::isfinite(limit_s) ? nlohmann::json(limit_s) : nlohmann::json(nullptr);
}

nlohmann::json SloJson(const Slo& slo) {
  return {{"max_ttft_s", Limit(slo.max_ttft_s)},
          {"max_tpot_s", Limit(slo.max_tpot_s)},
          {"percentile", slo.PercentileName()}};
}

nlohmann::json DistributionJson(const Samples& h, const Slo& slo,
                                const std::optional<BandSpec>& band) {
  nlohmann::json cdf = nlohmann::json::array();
  for (double q : kCdf) cdf.push_back({{"percentile", q}, {"value_s", h.Percentile(q)}});
  nlohmann::json j = {{"p50", h.Percentile(50)}, {"p90", h.Percentile(90)},
                      {"p99", h.Percentile(99)}, {"max", h.Max()},
                      {"mean", h.Mean()},        {"count", h.Count()},
                      {"at_slo", slo.At(h)},     {"cdf", cdf}};
  AddBand(j, band);
  return j;
}

nlohmann::json LatencyJson(const LatencySummary& s, const std::optional<BandSpec>& band) {
  nlohmann::json j = {{"mean", s.mean_s}, {"p50", s.p50_s}, {"p90", s.p90_s},
                      {"p99", s.p99_s},   {"max", s.max_s}, {"at_slo", s.at_slo_s}};
  AddBand(j, band);
  return j;
}

nlohmann::json MeasuredSpreadJson(const LoadBands& bands, const EngineProfile& engine,
                                  const std::string& gpu) {
  if (!bands.measured) return nullptr;
  return {{"engine", engine.name},
          {"measured_on", engine.closed_loop_measured_on},
          {"gpu", gpu},
          {"ttft", RatiosJson(engine, engine.closed_loop_ttft, "closed_loop_ttft_ratio")},
          {"tpot", RatiosJson(engine, engine.closed_loop_tpot, "closed_loop_tpot_ratio")}};
}

nlohmann::json LengthsJson(double input_tokens_mean, double output_tokens_mean,
                           const LengthSpread& spread) {
  return {{"input_tokens_mean", input_tokens_mean},
          {"output_tokens_mean", output_tokens_mean},
          {"input_distribution", LengthDistributionName(spread.input)},
          {"output_distribution", LengthDistributionName(spread.output)},
          {"length_cv", spread.Fixed() ? nlohmann::json(nullptr) : nlohmann::json(spread.cv)}};
}

nlohmann::json ClientPhaseJson(double lockstep_ttft_s, double lockstep_tpot_s,
                               const std::optional<OutOfPhase>& phase) {
  if (!phase) return nullptr;
  return {{"lockstep", {{"ttft_s", lockstep_ttft_s}, {"tpot_s", lockstep_tpot_s}}},
          {"out_of_phase", {{"ttft_s", phase->ttft_s}, {"tpot_s", phase->tpot_s}}},
          {"output_length_cv", kOutOfPhaseOutputCv}};
}

nlohmann::json SteadyStateJson(const SteadyState& s) {
  return {{"sized", s.sized},
          {"warmup_requests", s.warmup_requests},
          {"measured_requests", s.measured_requests},
          {"in_flight_per_replica", s.in_flight_per_replica},
          {"simulated_replicas", s.simulated_replicas},
          {"replicas", s.replicas},
          {"halves_compared", s.halves_compared},
          {"in_system", s.in_system_at_middle < 0
                            ? nlohmann::json(nullptr)
                            : nlohmann::json{{"at_middle_arrival", s.in_system_at_middle},
                                             {"at_last_arrival", s.in_system_at_last},
                                             {"grew", s.in_system_grew}}},
          {"ttft_drift", s.ttft_drift},
          {"tpot_drift", s.tpot_drift},
          // A run of fixed length was not sized: there was nothing to converge.
          {"converged", s.sized ? nlohmann::json(s.converged) : nlohmann::json(nullptr)},
          {"runs", s.runs}};
}

nlohmann::json OperatingPointJson(const OperatingPoint& p, const std::optional<LoadBands>& bands) {
  return {{"concurrency", p.concurrency},
          {"requests_per_s", p.requests_per_s},
          {"ttft_s", LatencyJson(p.ttft, bands ? std::optional(bands->ttft) : std::nullopt)},
          {"tpot_s", LatencyJson(p.tpot, bands ? std::optional(bands->tpot) : std::nullopt)},
          {"output_tokens_per_s", p.output_tokens_per_s},
          {"output_tokens_per_s_per_gpu", p.output_tokens_per_s_per_gpu},
          {"output_tokens_per_s_per_user", p.output_tokens_per_s_per_user},
          {"billed_output_tokens_per_s", p.billed_output_tokens_per_s},
          {"billed_output_tokens_per_s_per_gpu", p.billed_output_tokens_per_s_per_gpu},
          {"usd_per_mtok_output", p.usd_per_mtok_output},
          {"joules_per_output_token", p.joules_per_output_token},
          {"meets_slo", p.meets_slo},
          {"overloaded", p.overloaded},
          {"requests_simulated", p.requests_simulated},
          {"steady_state", SteadyStateJson(p.steady)}};
}

nlohmann::json PhaseJson(const PhaseBreakdown& p) {
  return {{"compute_s", p.compute_s},
          {"memory_s", p.memory_s},
          {"tp_comm_s", p.tp_comm_s},
          {"ep_comm_s", p.ep_comm_s},
          {"cp_comm_s", p.cp_comm_s},
          {"pp_comm_s", p.pp_comm_s},
          {"bubble_s", p.bubble_s},
          {"launch_s", p.launch_s},
          {"overhead_s", p.overhead_s},
          {"total_s", p.total_s},
          {"flops", p.flops},
          {"hbm_bytes", p.hbm_bytes},
          {"ep_algorithm", p.ep_algorithm
                               ? nlohmann::json(std::string(EpAlgorithmName(*p.ep_algorithm)))
                               : nlohmann::json(nullptr)},
          {"two_batch_overlap", p.two_batch_overlap}};
}

nlohmann::json PipelineJson(const StepEstimate& e) {
  // As the step model pipelines decode: the batch of each attention-DP rank is cut into at
  // most `pp` micro-batches; the slowest stage serves each of them once per cycle.
  const Layout& l = e.layout;
  const double per_rank =
      std::max(1.0, static_cast<double>(e.workload.batch) / static_cast<double>(l.AttentionDp()));
  const double micro = std::min(static_cast<double>(l.pp), per_rank);
  const double busy_s = e.decode.total_s - e.decode.bubble_s;
  return {{"stages", l.pp},
          {"micro_batches", static_cast<int64_t>(micro)},
          {"stage_time_s", busy_s / micro}};
}

nlohmann::json ClusterTreeJson(const ClusterSpec& cluster) {
  nlohmann::json levels = nlohmann::json::array();
  for (const TopologyLevel& level : cluster.levels) {
    levels.push_back({{"name", level.name},
                      {"fan_out", level.fan_out},
                      {"egress_bytes_per_s", level.egress_bytes_per_s}});
  }
  return {{"gpus", cluster.num_gpus}, {"gpu", cluster.gpu.name}, {"levels", levels}};
}

nlohmann::json RooflineJson(const ModelSpec& model, const ClusterSpec& cluster,
                            const PerfOptions& perf) {
  const Roofline r = ComputeRoofline(model, cluster.gpu, perf.weight_dtype, perf.kv_dtype, 0,
                                     cluster.GpusPerNode());
  nlohmann::json points = nlohmann::json::array();
  for (const RooflinePoint& p : r.points) {
    points.push_back({{"batch", p.batch},
                      {"arithmetic_intensity", p.intensity},
                      {"attainable_flops_per_s", p.attainable_flops_per_s}});
  }
  return {{"gpu", cluster.gpu.name},
          {"compute_dtype", DtypeName(r.compute_dtype)},
          {"ridge_flops_per_byte", r.ridge_flops_per_byte},
          {"points", points}};
}

nlohmann::json EpSettingJson(const EpSetting& ep) {
  return {{"algorithm", std::string(EpAlgorithmName(ep.algorithm))},
          {"dispatch_dtype", std::string(DtypeName(ep.dispatch_dtype))},
          {"two_batch_overlap", ep.two_batch_overlap}};
}

nlohmann::json SpeculativeJson(const SpeculativeOptions& s) {
  if (s.DraftTokens() == 0) return nullptr;
  return {{"method", SpeculativeMethodName(s.method)},
          {"draft_model",
           s.draft_model ? nlohmann::json(s.draft_model->name) : nlohmann::json(nullptr)},
          {"draft_tokens", s.DraftTokens()},
          {"acceptance", s.acceptance},
          {"tokens_per_step", ExpectedTokensPerStep(s.acceptance)}};
}

nlohmann::json MoeJson(const ModelSpec& given, const Layout& layout, const PerfOptions& o) {
  if (!given.is_moe()) return nullptr;
  const StatusOr<ModelSpec> routed = SharedExpertsAsRouted(given);
  const ModelSpec& model =
      o.shared_experts_routed && layout.ep > 1 && routed.ok() ? *routed : given;
  const ModelShard s = ShardModel(model, layout, o);
  return {{"routed_experts", model.moe.num_experts},
          {"redundant_experts", layout.ep > 1 ? o.redundant_experts : 0},
          {"expert_skew", Optional(o.expert_skew)},
          {"experts_per_gpu", s.experts_per_gpu},
          {"expert_placement_imbalance", s.expert_placement_imbalance},
          {"shared_experts", o.shared_experts_routed ? "routed" : "replicated"}};
}

nlohmann::json EngineSettingsJson(const Pool& pool) {
  const PerfOptions& p = pool.perf;
  return {{"engine", p.engine.name},
          {"max_num_seqs_per_rank", pool.max_batch},
          {"max_batched_tokens_per_rank", p.max_batched_tokens},
          {"chunked_prefill", ChunksPrompts(pool.schedule)},
          {"schedule", ScheduleName(pool.schedule)},
          {"admission", AdmissionName(pool.Batch().admission)},
          {"kv_block_tokens", static_cast<int64_t>(p.engine.kv_block_tokens)},
          {"gpu_memory_utilization", p.gpu_memory_utilization},
          {"kv_memory_rule", p.engine.kv_rule == KvMemoryRule::kFractionOfTotal
                                 ? "fraction_of_total"
                                 : "fraction_of_free_after_weights"},
          {"cuda_graph_max_batch", static_cast<int64_t>(p.engine.cuda_graph_max_batch)},
          {"weight_formats", WeightFormatName(p)},
          {"kv_dtype", DtypeName(p.kv_dtype)},
          {"ep_exchange", pool.layout.ep > 1 ? EpSettingJson(p.ep) : nlohmann::json(nullptr)},
          {"speculative", SpeculativeJson(p.speculative)}};
}

nlohmann::json DeploymentJson(const Deployment& d, const DeploymentEstimate* e,
                              const SavedDeployment& saved) {
  nlohmann::json pools = nlohmann::json::array();
  for (size_t i = 0; i < d.pools().size(); ++i) {
    const Pool& p = d.pools()[i];
    nlohmann::json pool = {{"role", std::string(PoolRoleName(p.role))},
                           {"layout", p.layout.ToString()},
                           {"workers", p.workers},
                           {"replicas", p.Replicas()},
                           {"gpus", p.Gpus()},
                           {"cluster", p.cluster.name},
                           {"gpu", p.cluster.gpu.name},
                           {"usd_per_gpu_hour", p.cluster.gpu.usd_per_gpu_hour},
                           {"engine_settings", EngineSettingsJson(p)}};
    if (e != nullptr) {
      const PoolEstimate& pe = e->pools[i];
      pool["kv_capacity_tokens_per_worker"] =
          static_cast<int64_t>(pe.one.memory.kv_capacity_tokens);
      pool["max_sequences_per_worker"] = pe.one.memory.max_sequences;
      pool["requests_per_s"] = pe.requests_per_s;
    }
    pools.push_back(pool);
  }
  nlohmann::json transfer = nullptr;
  if (d.disaggregated() && e != nullptr) {
    transfer = {{"mode", std::string(KvTransferModeName(d.transfer()))},
                {"link", e->link.name},
                {"link_bytes_per_s_per_gpu", e->link.bytes_per_s},
                {"s_per_prompt_token", e->transfer.s_per_token},
                {"exposed_s_per_prompt_token", e->transfer.exposed_s_per_token},
                {"latency_s", e->transfer.latency_s}};
  }
  return {{"name", d.ToString()},
          {"disaggregated", d.disaggregated()},
          {"gpus", d.gpus()},
          {"usd_per_hour", d.UsdPerHour()},
          {"board_power_w", d.BoardPowerW()},
          {"pools", pools},
          {"kv_transfer", transfer},
          {"capacity_requests_per_s",
           e != nullptr ? nlohmann::json(e->capacity_requests_per_s) : nlohmann::json(nullptr)},
          {"saved", ToJson(saved)}};
}

}  // namespace shardwise::api::json
