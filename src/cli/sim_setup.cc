#include "sim_setup.h"

#include <fmt/format.h>

#include <algorithm>

#include "perf_options.h"
#include "shardwise/plan/planner.h"

namespace shardwise::cli {
namespace {

// Requests per second a pool of `replicas` serves in steady state at `step`'s largest batch
// that fits (`max_sequences` per replica, `max_batch` per attention rank).
double DecodeRequestsPerS(const StepModel& step, const Workload& one, int64_t max_sequences,
                          int64_t max_batch, double replicas) {
  Workload full = one;
  full.batch =
      std::max<int64_t>(1, std::min(max_batch * step.layout().AttentionDp(), max_sequences));
  return step.Estimate(full).output_tokens_per_s / static_cast<double>(step.layout().Replicas()) *
         replicas / std::max<double>(1.0, static_cast<double>(one.output_tokens));
}

std::string Plural(int64_t n, const char* what) {
  return fmt::format("{} {}{}", n, what, n == 1 ? "" : "s");
}

}  // namespace

StatusOr<SimSetup> AggregatedSetup(const ModelSpec& model, const ClusterSpec& cluster,
                                   const std::string& layout_text, const PerfOptions& perf,
                                   const Workload& one, int64_t longest_tokens, int64_t max_batch,
                                   Admission admission) {
  Layout layout;
  if (!layout_text.empty()) {
    SW_ASSIGN_OR_RETURN(layout, ParseLayout(layout_text));
    SW_RETURN_IF_ERROR(CheckRedundantExperts(layout, perf));
  } else {
    PlanRequest req;
    req.perf = perf;
    req.max_batch = max_batch;
    req.workload.prompt_tokens = one.prompt_tokens;
    req.workload.output_tokens = one.output_tokens;
    SW_ASSIGN_OR_RETURN(PlanResult plan, Plan(model, cluster, req));
    layout = plan.ranked.front().estimate.layout;
  }
  SW_ASSIGN_OR_RETURN(StepModel step, StepModel::Create(model, cluster, layout, perf));
  const StepEstimate probe = step.Estimate(one);
  if (!probe.memory.Fits()) return Error(DoesNotFitMessage(model, cluster, probe, perf));
  SimSetup s;
  s.name = layout.ToString();
  s.config =
      ServingConfig(cluster, layout, perf, probe.memory.kv_capacity_tokens, max_batch, admission);
  s.config.state_tokens_per_sequence = probe.memory.state_tokens_per_sequence;
  s.gpus = s.config.replicas * s.config.gpus_per_replica;
  s.shape = fmt::format("{} of {}", Plural(s.config.replicas, "replica"),
                        Plural(s.config.gpus_per_replica, "GPU"));
  SW_ASSIGN_OR_RETURN(StepTable table, ServingTable(step, perf, probe.memory.max_sequences,
                                                    max_batch, longest_tokens));
  s.aggregated_table = std::make_unique<StepTable>(std::move(table));
  s.table = s.aggregated_table.get();
  s.capacity_requests_per_s = DecodeRequestsPerS(step, one, probe.memory.max_sequences, max_batch,
                                                 static_cast<double>(layout.Replicas()));
  s.moe_json = MoeJson(model, layout, perf);
  s.ttft_band = PhaseBand(probe.prefill, cluster.gpu, perf.engine);
  s.tpot_band = PhaseBand(probe.decode, cluster.gpu, perf.engine);
  return s;
}

StatusOr<SimSetup> DisaggregatedSetup(const ModelSpec& model, const DisaggSetup& d,
                                      const PerfOptions& perf, const Workload& one,
                                      int64_t longest_tokens, int64_t max_batch,
                                      Admission admission, const OfferedLoad& offered) {
  const Deployment& dep = d.deployment;
  SW_RETURN_IF_ERROR(d.CheckPools(perf));
  auto prefill =
      StepModel::Create(model, d.prefill_cluster, dep.prefill.layout, d.PrefillPerf(perf));
  if (!prefill.ok()) return Error("the prefill layout: " + prefill.status().message());
  auto decode = StepModel::Create(model, d.decode_cluster, dep.decode->layout, perf);
  if (!decode.ok()) return Error("the decode layout: " + decode.status().message());
  SW_ASSIGN_OR_RETURN(std::unique_ptr<DisaggregatedServing> serving,
                      BuildDisaggregatedServing(model, dep, *prefill, *decode, d.prefill_cluster,
                                                d.decode_cluster, d.same_cluster, perf, one,
                                                longest_tokens, max_batch, admission, offered));
  SimSetup s;
  s.name = dep.ToString();
  s.gpus = dep.Gpus();
  s.shape = d.same_cluster
                ? fmt::format("{} prefill + {} decode GPUs", dep.prefill.Gpus(), dep.decode->Gpus())
                : fmt::format("{} prefill GPUs on {}, {} decode GPUs on {}", dep.prefill.Gpus(),
                              d.prefill_cluster.name, dep.decode->Gpus(), d.decode_cluster.name);
  s.config = serving->config;
  s.table = &serving->prefill_table;
  const double prefill_per_s = static_cast<double>(dep.prefill.workers) *
                               static_cast<double>(dep.prefill.layout.Replicas()) /
                               serving->prefill_probe.prefill_s_per_request;
  const double decode_per_s =
      DecodeRequestsPerS(*decode, one, serving->decode_probe.memory.max_sequences, max_batch,
                         static_cast<double>(dep.decode->workers * dep.decode->layout.Replicas()));
  s.capacity_requests_per_s = std::min(prefill_per_s, decode_per_s);
  auto pool = [](const Pool& p, const ClusterSpec& c, const StepEstimate& probe) {
    return nlohmann::json{{"layout", p.layout.ToString()},
                          {"workers", p.workers},
                          {"gpus", p.Gpus()},
                          {"cluster", c.name},
                          {"gpu", c.gpu.name},
                          {"kv_capacity_tokens_per_worker", probe.memory.kv_capacity_tokens},
                          {"max_sequences_per_worker", probe.memory.max_sequences}};
  };
  s.link = serving->link.name;
  s.transfer_mode = dep.transfer;
  s.deployment_json = {
      {"disaggregated", true},
      {"prefill", pool(dep.prefill, d.prefill_cluster, serving->prefill_probe)},
      {"decode", pool(*dep.decode, d.decode_cluster, serving->decode_probe)},
      {"kv_transfer",
       {{"mode", std::string(KvTransferModeName(dep.transfer))},
        {"link", serving->link.name},
        {"link_bytes_per_s_per_gpu", serving->link.bytes_per_s},
        {"s_per_prompt_token", serving->transfer.s_per_token},
        {"exposed_s_per_prompt_token", serving->transfer.exposed_s_per_token},
        {"latency_s", serving->transfer.latency_s}}},
      {"capacity_requests_per_s", {{"prefill", prefill_per_s}, {"decode", decode_per_s}}}};
  s.moe_json = MoeJson(model, dep.decode->layout, perf);
  s.ttft_band = PhaseBand(serving->prefill_probe.prefill, d.prefill_cluster.gpu, perf.engine);
  s.tpot_band = PhaseBand(serving->decode_probe.decode, d.decode_cluster.gpu, perf.engine);
  s.disaggregated = std::move(serving);  // the tables stay where config points
  return s;
}

}  // namespace shardwise::cli
