// `shardwise plan` as text: the ranked layouts at the load, why each, the step model's Pareto
// front and the aggregated-or-disaggregated verdict (text/text.h).
#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "shardwise/common/format.h"
#include "shardwise/report/table.h"
#include "shardwise/text/text.h"

namespace shardwise::text {
namespace {

std::string LoadLine(const shardwise::PlanRequest& req) {
  switch (req.load.kind) {
    case PlanLoad::Kind::kConcurrency:
      return "load: closed loop of " + Counted(req.load.value, "client", "clients");
    case PlanLoad::Kind::kRate:
      return fmt::format("load: Poisson arrivals at {:g} requests/s", req.load.value);
    case PlanLoad::Kind::kOffline:
      break;
  }
  return "load: offline, each layout at its best batch";
}

std::string Ranked(const api::PlanReport& rep) {
  const shardwise::PlanRequest& req = rep.request;
  if (rep.result.ranked.empty()) {
    return LoadLine(req) +
           "\nno aggregated layout of these GPUs: " + rep.result.unranked.message() + "\n";
  }
  const std::string pct = req.slo.PercentileName();
  std::string out =
      LoadLine(req) + fmt::format(
                          "; TTFT and TPOT simulated at that load, at {} and mean (bands in "
                          "--json); {}\n",
                          pct, RankingPhrase(req.objective));
  Table table({"#", "layout", "batch", "in flight", "TTFT " + pct, "TTFT mean", "TPOT " + pct,
               "TPOT mean", "tok/s/user", "tok/s", "tok/s/GPU", "$/Mtok out", "J/tok", "mem/GPU",
               "bound"});
  table.SetLeftAligned({1, 14});
  for (size_t i = 0; i < rep.result.ranked.size(); ++i) {
    const StepEstimate& e = rep.result.ranked[i].estimate;
    const OperatingPoint& a = *rep.result.ranked[i].at_load;
    table.AddRow({std::to_string(i + 1), e.layout.ToString(), std::to_string(e.workload.batch),
                  fmt::format("{:.0f}", a.concurrency), FormatSeconds(a.ttft.at_slo_s),
                  FormatSeconds(a.ttft.mean_s), FormatSeconds(a.tpot.at_slo_s),
                  FormatSeconds(a.tpot.mean_s),
                  fmt::format("{:.1f}", a.output_tokens_per_s_per_user),
                  fmt::format("{:.0f}", a.billed_output_tokens_per_s),
                  fmt::format("{:.1f}", a.billed_output_tokens_per_s_per_gpu),
                  fmt::format("{:.3f}", rep.result.ranked[i].usd_per_mtok_output),
                  rep.result.ranked[i].joules_per_output_token > 0
                      ? fmt::format("{:.3g}", rep.result.ranked[i].joules_per_output_token)
                      : "-",
                  FormatBytes(e.memory.UsedBytes()), e.bound});
  }
  return out + table.Render();
}

}  // namespace

std::string PlanText(const api::PlanReport& rep) {
  const shardwise::PlanRequest& req = rep.request;
  std::string out = fmt::format(
      "plan: {} on {} ({} x {}), ISL {} / OSL {}{}, objective {}, {} weights, {} KV\n"
      "{} considered, {} fit in memory, {} in {}\n\n",
      rep.model.name, rep.cluster.name, rep.cluster.num_gpus, rep.cluster.gpu.name,
      req.workload.prompt_tokens, req.workload.output_tokens, LengthSpreadSuffix(req.load.lengths),
      ObjectiveName(req.objective), WeightFormatName(req.perf), DtypeName(req.perf.kv_dtype),
      Counted(rep.result.layouts_considered, "layout", "layouts"), rep.result.layouts_fitting,
      Counted(rep.result.points_evaluated, "(layout, batch) point", "(layout, batch) points"),
      FormatSeconds(rep.elapsed_s));
  out += Ranked(rep);
  const auto& ranked = rep.result.ranked;
  if (std::any_of(ranked.begin(), ranked.end(),
                  [](const PlanEntry& p) { return p.at_load && p.at_load->out_of_phase; })) {
    out +=
        "\nlockstep     fixed lengths keep the clients in step (the means above); each "
        "layout's loop out of phase\n             is in --json (client_phase), and the "
        "bands cover both\n";
  }
  if (req.load.kind == PlanLoad::Kind::kConcurrency) {
    out += "\n";
    out += MeasuredSpreadText(req.perf.engine, rep.cluster.gpu.name, "the bands in --json");
  }
  if (!ranked.empty()) out += "\nwhy:\n";
  for (size_t i = 0; i < ranked.size(); ++i) {
    out += fmt::format("  {}. {}\n", i + 1, ranked[i].why);
  }
  out +=
      "\nPareto front of the step model, unsimulated (TPOT: one decode step at the "
      "batch; no point is both faster per user and more productive per GPU):\n";
  Table pareto({"layout", "batch", "tok/s/user", "tok/s/GPU", "TPOT (step)"});
  pareto.SetLeftAligned({0});
  for (const PlanEntry& p : rep.result.pareto) {
    const StepEstimate& e = p.estimate;
    pareto.AddRow({e.layout.ToString(), std::to_string(e.workload.batch),
                   fmt::format("{:.1f}", e.output_tokens_per_s_per_user),
                   fmt::format("{:.1f}", e.output_tokens_per_s_per_gpu), FormatSeconds(e.tpot_s)});
  }
  out += pareto.Render();
  if (rep.searched_disaggregated) {
    out += "\naggregated or disaggregated:\n";
    if (rep.disaggregated) out += "  best split: " + rep.disaggregated->why + "\n";
    out += "  " + rep.verdict.why + "\n";
  }
  return out;
}

}  // namespace shardwise::text
