#include "explain_disagg.h"

#include <fmt/format.h>

#include <cmath>
#include <iostream>

#include "command.h"
#include "perf_options.h"
#include "shardwise/common/format.h"
#include "shardwise/model/accounting.h"
#include "shardwise/perf/kv_transfer.h"
#include "shardwise/perf/step.h"
#include "shardwise/perf/uncertainty.h"
#include "shardwise/report/table.h"

namespace shardwise::cli {
Status ExplainDisaggregated(const ModelSpec& model, const DisaggSetup& d, const PerfOptions& perf,
                            int64_t batch, int64_t context, int64_t osl, bool json,
                            const HtmlOptions& html) {
  const Deployment& dep = d.deployment;
  SW_RETURN_IF_ERROR(d.CheckPools(perf));
  const PerfOptions prefill_perf = d.PrefillPerf(perf);
  auto prefill_step = StepModel::Create(model, d.prefill_cluster, dep.prefill.layout, prefill_perf);
  if (!prefill_step.ok()) return Error("the prefill layout: " + prefill_step.status().message());
  auto decode_step = StepModel::Create(model, d.decode_cluster, dep.decode->layout, perf);
  if (!decode_step.ok()) return Error("the decode layout: " + decode_step.status().message());
  Workload w;
  w.batch = 1;
  w.prompt_tokens = context;
  w.output_tokens = osl;
  w.decode_context_tokens = context;
  const StepEstimate p = prefill_step->Estimate(w);
  if (!p.memory.Fits()) {
    return Error("the prefill layout: " +
                 DoesNotFitMessage(model, d.prefill_cluster, p, prefill_perf));
  }
  w.batch = batch;
  const StepEstimate e = decode_step->Estimate(w);
  if (!e.memory.Fits()) {
    return Error("the decode layout: " + DoesNotFitMessage(model, d.decode_cluster, e, perf));
  }
  const KvLink link = PoolLink(d.prefill_cluster, d.decode_cluster, d.same_cluster, dep.Gpus());
  const double prompt = static_cast<double>(context);
  const KvTransfer t =
      EstimateKvTransfer(link, p.memory.kv_bytes_per_token, e.memory.kv_bytes_per_token,
                         dep.transfer, p.ttft_s / prompt, static_cast<double>(model.num_layers()));
  const double transfer_s = t.latency_s + t.exposed_s_per_token * prompt;
  // Requests per second each pool serves: the prefill pool at full load (chunked prefill), the
  // decode pool at `batch` per worker for OSL steps.
  const double prefill_per_s = static_cast<double>(dep.prefill.workers) *
                               static_cast<double>(dep.prefill.layout.Replicas()) /
                               p.prefill_s_per_request;
  const double decode_per_worker_s =
      static_cast<double>(batch) / (static_cast<double>(osl) * e.tpot_s);
  const double decode_per_s = static_cast<double>(dep.decode->workers) * decode_per_worker_s;
  const double served_per_s = std::min(prefill_per_s, decode_per_s);
  const double output_per_s = served_per_s * static_cast<double>(osl);
  const double gpus = static_cast<double>(dep.Gpus());
  // Decode workers that keep up with this prefill pool: its rate over one decode worker's.
  const double balanced_decode = prefill_per_s / decode_per_worker_s;
  // The bands of the prefill worker's and the decode worker's steps (perf/uncertainty.h); the
  // prefill's relative band stands for the whole TTFT, the KV transfer included.
  const PhaseUncertainty ttft_band =
      PhaseBand(p.prefill, d.prefill_cluster.gpu, prefill_perf.engine);
  const PhaseUncertainty tpot_band = PhaseBand(e.decode, d.decode_cluster.gpu, perf.engine);
  const double ttft_s = p.ttft_s + transfer_s;
  const nlohmann::json out = {
      {"command", "explain"},
      {"model", model.name},
      {"cluster", d.same_cluster ? d.decode_cluster.name
                                 : d.prefill_cluster.name + " + " + d.decode_cluster.name},
      {"deployment",
       {{"disaggregated", true},
        {"name", dep.ToString()},
        {"prefill",
         {{"layout", dep.prefill.layout.ToString()},
          {"workers", dep.prefill.workers},
          {"cluster", d.prefill_cluster.name},
          {"gpus", dep.prefill.Gpus()}}},
        {"decode",
         {{"layout", dep.decode->layout.ToString()},
          {"workers", dep.decode->workers},
          {"cluster", d.decode_cluster.name},
          {"gpus", dep.decode->Gpus()}}}}},
      {"gpus", dep.Gpus()},
      {"batch_per_decode_worker", batch},
      {"context", context},
      {"prefill", PhaseJson(p.prefill)},
      {"decode", PhaseJson(e.decode)},
      {"kv_transfer",
       {{"mode", std::string(KvTransferModeName(dep.transfer))},
        {"link", link.name},
        {"bytes_per_prompt", prompt * KvBytesPerToken(model, perf.kv_dtype)},
        {"time_s", t.latency_s + t.s_per_token * prompt},
        {"exposed_s", transfer_s}}},
      {"unloaded_ttft_s", ttft_s},
      {"unloaded_ttft_s_low", Widen(ttft_s, ttft_band.relative).low},
      {"unloaded_ttft_s_high", Widen(ttft_s, ttft_band.relative).high},
      {"decode_tpot_s", e.tpot_s},
      {"decode_tpot_s_low", Widen(e.tpot_s, tpot_band.relative).low},
      {"decode_tpot_s_high", Widen(e.tpot_s, tpot_band.relative).high},
      {"assumed_inputs", AssumedInputs(ttft_band, tpot_band)},
      {"requests_per_s", {{"prefill_pool", prefill_per_s}, {"decode_pool", decode_per_s}}},
      {"balanced_decode_workers", balanced_decode},
      {"output_tokens_per_s", output_per_s},
      {"output_tokens_per_s_per_gpu", output_per_s / gpus},
      {"output_tokens_per_s_per_user", 1.0 / e.tpot_s},
      {"bound", e.bound}};
  if (json) {
    PrintJson(out);
    return html.Write(out);
  }
  std::cout << fmt::format(
      "{} disaggregated: {} ({} GPUs: {} prefill on {}, {} decode on {}), context {}, decode "
      "batch {} per worker\n\n",
      model.name, dep.ToString(), dep.Gpus(), dep.prefill.Gpus(), d.prefill_cluster.name,
      dep.decode->Gpus(), d.decode_cluster.name, context, batch);
  Table table({"phase", "compute", "memory", "TP comm", "EP comm", "CP comm", "PP comm", "bubble",
               "total"});
  table.AddRow(PhaseRow("prefill worker (1 prompt)", p.prefill));
  table.AddRow(PhaseRow("decode worker (1 step)", e.decode));
  std::cout << table.Render() << "\n";
  std::cout << fmt::format(
      "TTFT        {} ±{:.0f}%  (prefill {} + KV transfer {} over {}, {})\n"
      "TPOT        {} ±{:.0f}%  ({:.1f} tokens/s per user; decode bound by {})\n"
      "pools       prefill {:.2f} requests/s at full load, decode {:.2f} requests/s at batch {}\n"
      "serves      {:.2f} requests/s = {:.0f} output tokens/s, {:.1f} per GPU; the {} pool binds\n"
      "balance     {:.2f} decode workers of {} keep up with this prefill pool\n",
      FormatSeconds(ttft_s), 100 * ttft_band.relative, FormatSeconds(p.ttft_s),
      FormatSeconds(transfer_s), link.name, KvTransferModeName(dep.transfer),
      FormatSeconds(e.tpot_s), 100 * tpot_band.relative, 1.0 / e.tpot_s, e.bound, prefill_per_s,
      decode_per_s, batch, served_per_s, output_per_s, output_per_s / gpus,
      prefill_per_s < decode_per_s ? "prefill" : "decode", balanced_decode,
      dep.decode->layout.ToString());
  return html.Write(out);
}

}  // namespace shardwise::cli
