#include "plan_disagg.h"

#include <fmt/format.h>

#include "html_output.h"
#include "metric_json.h"
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
  // The winner's figures first.
  const OperatingPoint& w = v.disaggregated_wins ? b : a;
  const OperatingPoint& l = v.disaggregated_wins ? a : b;
  const std::string figures = fmt::format(
      "{:.1f} against {:.1f} tokens/s per GPU, TPOT {} against {}, TTFT {} against {}",
      w.output_tokens_per_s_per_gpu, l.output_tokens_per_s_per_gpu, FormatSeconds(w.tpot.mean_s),
      FormatSeconds(l.tpot.mean_s), FormatSeconds(w.ttft.mean_s), FormatSeconds(l.ttft.mean_s));
  const int64_t agg_gpus = aggregated.estimate.layout.gpus();
  const int64_t disagg_gpus = d.deployment.Gpus();
  if (v.disaggregated_wins) {
    v.why = fmt::format(
        "disaggregated {} wins over aggregated {}: {} ({} GPUs against {}); its decode steps carry "
        "no prompt chunks, so each pool runs the layout and batch its own phase wants",
        d.deployment.ToString(), agg, figures, disagg_gpus, agg_gpus);
  } else {
    v.why = fmt::format(
        "aggregated {} wins over disaggregated {}: {} ({} GPUs against {}); splitting the GPUs "
        "costs more than keeping prompt chunks out of the decode steps saves",
        agg, d.deployment.ToString(), figures, agg_gpus, disagg_gpus);
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
                        {"unloaded_ttft_s", e.prefill.ttft_s},
                        {"requests_per_s", e.prefill_requests_per_s},
                        {"ep_exchange", d.prefill.layout.ep > 1 ? EpSettingJson(e.prefill_ep)
                                                                : nlohmann::json(nullptr)},
                        {"phase", PhaseJson(e.prefill.prefill)}}},
                      {"decode",
                       {{"layout", d.decode->layout.ToString()},
                        {"workers", d.decode->workers},
                        {"gpus", d.decode->Gpus()},
                        {"batch_per_worker", e.decode.workload.batch},
                        {"decode_tpot_s", e.decode.tpot_s},
                        {"requests_per_s", e.decode_requests_per_s},
                        {"ep_exchange", d.decode->layout.ep > 1 ? EpSettingJson(e.decode_ep)
                                                                : nlohmann::json(nullptr)},
                        {"phase", PhaseJson(e.decode.decode)}}},
                      {"kv_transfer",
                       {{"mode", std::string(KvTransferModeName(d.transfer))},
                        {"link", e.link.name},
                        {"exposed_s_per_prompt_token", e.transfer.exposed_s_per_token},
                        {"latency_s", e.transfer.latency_s}}},
                      {"unloaded_ttft_s", e.ttft_s},
                      {"decode_tpot_s", e.tpot_s},
                      {"output_tokens_per_s", e.output_tokens_per_s},
                      {"output_tokens_per_s_per_gpu", e.output_tokens_per_s_per_gpu},
                      {"why", e.why}};
  if (e.at_load) {
    const OperatingPoint& a = *e.at_load;
    j["at_load"] = {{"concurrency", a.concurrency},
                    {"requests_per_s", a.requests_per_s},
                    {"ttft_s", LatencyJson(a.ttft)},
                    {"tpot_s", LatencyJson(a.tpot)},
                    {"output_tokens_per_s", a.output_tokens_per_s},
                    {"output_tokens_per_s_per_gpu", a.output_tokens_per_s_per_gpu}};
  }
  return j;
}

}  // namespace shardwise::cli
