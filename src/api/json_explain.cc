// explain's JSON (docs/json.md, explain).
#include "json_parts.h"
#include "shardwise/api/json.h"
#include "shardwise/model/accounting.h"
#include "shardwise/price/price.h"

namespace shardwise::api {
namespace {

nlohmann::json MemoryJson(const MemoryPerGpu& m) {
  return {{"weights_bytes", m.weight_bytes},
          {"kv_bytes", m.kv_bytes},
          {"state_bytes_per_sequence", m.state_bytes_per_sequence},
          {"activation_bytes", m.activation_bytes},
          {"comm_buffer_bytes", m.comm_buffer_bytes},
          {"reserve_bytes", m.reserve_bytes},
          {"usable_bytes", m.usable_bytes},
          {"max_sequences", m.max_sequences}};
}

// What a disaggregated explanation adds: the KV transfer and what each pool serves.
void AddPools(const Explanation& e, nlohmann::json& j) {
  const DeploymentEstimate& est = e.estimate;
  const double prompt = static_cast<double>(e.workload.prompt_tokens);
  const Pool& decode = e.deployment.decode();
  const double prefill_per_s = est.prefill().requests_per_s;
  const double decode_per_s = est.decode().requests_per_s;
  j["kv_transfer"] = {{"mode", std::string(KvTransferModeName(e.deployment.transfer()))},
                      {"link", est.link.name},
                      {"bytes_per_prompt", prompt * KvBytesPerToken(e.model, decode.perf.kv_dtype)},
                      {"time_s", est.transfer.latency_s + est.transfer.s_per_token * prompt},
                      {"exposed_s", est.transfer_s}};
  j["requests_per_s"] = {{"prefill_pool", prefill_per_s},
                         {"decode_pool", decode_per_s},
                         {"served", e.ServedRequestsPerS()}};
  j["balanced_decode_workers"] = est.balanced_decode_workers;
  j["batch_per_decode_worker"] = e.workload.batch;
  const double output_per_s = e.OutputTokensPerS();
  j["output_tokens_per_s"] = output_per_s;
  j["output_tokens_per_s_per_gpu"] = output_per_s / static_cast<double>(e.deployment.gpus());
}

}  // namespace

nlohmann::json ToJson(const Explanation& e) {
  const StepEstimate& s = e.Step();
  const StepEstimate& prefill = e.estimate.prefill().one;
  const Pool& pool = e.deployment.decode();
  const Layout& l = pool.layout;
  const double ttft = e.estimate.unloaded_ttft_s;
  // What the API server adds to a lone request's TTFT (simulate's front end: the prefill pool's).
  const double front_end_s = e.deployment.prefill().perf.engine.FrontEndS(e.workload.prompt_tokens);
  nlohmann::json j = {{"schema_version", kSchemaVersion},
                      {"command", "explain"},
                      {"model", e.model.name},
                      {"cluster", e.cluster.name},
                      {"gpu", e.cluster.gpu.name},
                      {"usd_per_gpu_hour", e.cluster.gpu.usd_per_gpu_hour},
                      {"deployment", json::DeploymentJson(e.deployment, &e.estimate, e.saved)},
                      {"layout", e.deployment.ToString()},
                      {"gpus", e.deployment.gpus()},
                      {"dp", l.dp},
                      {"tp", l.tp},
                      {"pp", l.pp},
                      {"ep", l.ep},
                      {"etp", l.ExpertTp()},
                      {"cp", l.cp},
                      {"batch", e.workload.batch},
                      {"context", e.workload.prompt_tokens},
                      {"osl", e.workload.output_tokens},
                      {"dtype", DtypeName(pool.perf.weight_dtype)},
                      {"weight_formats", WeightFormatName(pool.perf)},
                      {"kv_dtype", DtypeName(pool.perf.kv_dtype)},
                      {"engine", pool.perf.engine.name},
                      {"moe", json::MoeJson(e.model, l, pool.perf)},
                      {"expert_dropped_fraction", s.expert_dropped_share},
                      {"speculative", json::SpeculativeJson(pool.perf.speculative)},
                      {"tokens_per_step", s.tokens_per_step},
                      {"draft_s", s.draft_s},
                      {"prefix_hit_rate", pool.perf.prefix_hit_rate},
                      {"pipeline", json::PipelineJson(s)},
                      {"roofline", json::RooflineJson(e.model, e.cluster, pool.perf)},
                      {"cluster_tree", json::ClusterTreeJson(e.cluster)},
                      {"prefill", json::PhaseJson(prefill.prefill)},
                      {"decode", json::PhaseJson(s.decode)},
                      {"unloaded_ttft_s", ttft},
                      {"unloaded_ttft_s_low", Widen(ttft, e.ttft_band.relative).low},
                      {"unloaded_ttft_s_high", Widen(ttft, e.ttft_band.relative).high},
                      {"front_end_s", front_end_s},
                      {"decode_tpot_s", s.tpot_s},
                      {"decode_tpot_s_low", Widen(s.tpot_s, e.tpot_band.relative).low},
                      {"decode_tpot_s_high", Widen(s.tpot_s, e.tpot_band.relative).high},
                      {"assumed_inputs", AssumedInputs(e.ttft_band, e.tpot_band)},
                      {"output_tokens_per_s", e.OutputTokensPerS()},
                      {"output_tokens_per_s_per_gpu",
                       e.OutputTokensPerS() / static_cast<double>(e.deployment.gpus())},
                      {"front_end_binds", e.FrontEndBinds()},
                      {"output_tokens_per_s_per_user", s.output_tokens_per_s_per_user},
                      {"bound", s.bound},
                      {"over_parallelised", s.over_parallelised},
                      {"tp_comm_per_layer_s", s.tp_comm_per_layer_s},
                      {"compute_per_layer_s", s.compute_per_layer_s},
                      {"memory_per_gpu_bytes", s.memory.UsedBytes()},
                      {"memory", MemoryJson(s.memory)},
                      {"energy",
                       {{"board_power_w", e.deployment.BoardPowerW()},
                        {"joules_per_output_token", e.JoulesPerOutputToken()},
                        {"basis", kEnergyBasis}}},
                      {"notes", e.notes}};
  if (e.deployment.disaggregated()) AddPools(e, j);
  // The bill over the output tokens at that throughput (the text's cost line).
  const double tokens_per_s = j["output_tokens_per_s"].get<double>();
  j["usd_per_mtok_output"] =
      tokens_per_s > 0 ? nlohmann::json(UsdPerMtok(e.deployment.UsdPerHour(), tokens_per_s))
                       : nlohmann::json(nullptr);
  return j;
}

}  // namespace shardwise::api
