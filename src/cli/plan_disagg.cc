#include "plan_disagg.h"

#include <fmt/format.h>

#include "html_output.h"
#include "perf_options.h"
#include "shardwise/common/format.h"

namespace shardwise::cli {

DeploymentVerdict CompareDeployments(const PlanEntry& aggregated,
                                     const std::optional<DisaggPlanEntry>& disaggregated,
                                     Objective objective) {
  DeploymentVerdict v;
  const OperatingPoint& a = *aggregated.at_load;
  const std::string agg = aggregated.estimate.layout.ToString();
  if (!disaggregated) {
    v.why = fmt::format(
        "aggregated {} wins: no prefill/decode split of these GPUs meets the SLOs at this load "
        "with more tokens per GPU",
        agg);
    return v;
  }
  const DisaggPlanEntry& d = *disaggregated;
  const OperatingPoint& b = *d.at_load;
  if (objective == Objective::kLatency) {
    v.disaggregated_wins = b.tpot.mean_s < a.tpot.mean_s;
  } else {
    v.disaggregated_wins = b.output_tokens_per_s_per_gpu > a.output_tokens_per_s_per_gpu;
  }
  const std::string figures = fmt::format(
      "{:.1f} against {:.1f} tokens/s per GPU, TPOT {} against {}, TTFT {} against {}",
      b.output_tokens_per_s_per_gpu, a.output_tokens_per_s_per_gpu, FormatSeconds(b.tpot.mean_s),
      FormatSeconds(a.tpot.mean_s), FormatSeconds(b.ttft.mean_s), FormatSeconds(a.ttft.mean_s));
  const std::string gpus =
      fmt::format("{} GPUs against {}", d.deployment.Gpus(), aggregated.estimate.layout.gpus());
  if (v.disaggregated_wins) {
    v.why = fmt::format(
        "disaggregated {} wins over aggregated {}: {} ({}); its decode steps carry no prompt "
        "chunks, so each pool runs the layout and batch its own phase wants",
        d.deployment.ToString(), agg, figures, gpus);
  } else {
    v.why = fmt::format(
        "aggregated {} wins over disaggregated {}: {} ({}, disaggregated against aggregated); "
        "splitting the GPUs costs more than keeping prompt chunks out of the decode steps saves",
        agg, d.deployment.ToString(), figures, gpus);
  }
  return v;
}

nlohmann::json DisaggEntryJson(const DisaggPlanEntry& e) {
  const Deployment& d = e.deployment;
  nlohmann::json j = {{"deployment", d.ToString()},
                      {"gpus", d.Gpus()},
                      {"prefill",
                       {{"layout", d.prefill.layout.ToString()},
                        {"workers", d.prefill.workers},
                        {"gpus", d.prefill.Gpus()},
                        {"ttft_s", e.prefill.ttft_s},
                        {"requests_per_s", e.prefill_requests_per_s},
                        {"ep_exchange", d.prefill.layout.ep > 1 ? EpSettingJson(e.prefill_ep)
                                                                : nlohmann::json(nullptr)},
                        {"phase", PhaseJson(e.prefill.prefill)}}},
                      {"decode",
                       {{"layout", d.decode->layout.ToString()},
                        {"workers", d.decode->workers},
                        {"gpus", d.decode->Gpus()},
                        {"batch_per_worker", e.decode.workload.batch},
                        {"tpot_s", e.decode.tpot_s},
                        {"requests_per_s", e.decode_requests_per_s},
                        {"ep_exchange", d.decode->layout.ep > 1 ? EpSettingJson(e.decode_ep)
                                                                : nlohmann::json(nullptr)},
                        {"phase", PhaseJson(e.decode.decode)}}},
                      {"kv_transfer",
                       {{"mode", std::string(KvTransferModeName(d.transfer))},
                        {"link", e.link.name},
                        {"exposed_s_per_prompt_token", e.transfer.exposed_s_per_token},
                        {"latency_s", e.transfer.latency_s}}},
                      {"ttft_s", e.ttft_s},
                      {"tpot_s", e.tpot_s},
                      {"output_tokens_per_s", e.output_tokens_per_s},
                      {"output_tokens_per_s_per_gpu", e.output_tokens_per_s_per_gpu},
                      {"why", e.why}};
  if (e.at_load) {
    const OperatingPoint& a = *e.at_load;
    j["at_load"] = {
        {"concurrency", a.concurrency},
        {"requests_per_s", a.requests_per_s},
        {"ttft_s", {{"mean", a.ttft.mean_s}, {"p50", a.ttft.p50_s}, {"p99", a.ttft.p99_s}}},
        {"tpot_s", {{"mean", a.tpot.mean_s}, {"p50", a.tpot.p50_s}, {"p99", a.tpot.p99_s}}},
        {"output_tokens_per_s", a.output_tokens_per_s},
        {"output_tokens_per_s_per_gpu", a.output_tokens_per_s_per_gpu}};
  }
  return j;
}

}  // namespace shardwise::cli
