// `shardwise plan`: every valid layout of a cluster, ranked by an objective under SLOs
// (api/plan.h).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "command.h"
#include "emit_options.h"
#include "html_output.h"
#include "request_flags.h"
#include "shardwise/common/format.h"
#include "shardwise/report/table.h"
#include "shardwise/shardwise.h"
#include "shardwise/text/text.h"
#include "validators.h"

namespace shardwise::cli {
namespace {

struct PlanOptions {
  api::PlanRequest request;
  CLI::Option* model = nullptr;
  ClusterFlags cluster;
  ServingFlags serving;
  SloFlags slo;
  LengthSpreadFlags spread;
  int64_t concurrency = 0;
  CLI::Option* concurrency_option = nullptr;
  double rate = 0;
  CLI::Option* rate_option = nullptr;
  std::string disagg = "auto";
  bool json = false;
  HtmlOptions html;
  EmitOptions emit;
};

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

void PrintRanked(const api::PlanReport& rep) {
  const shardwise::PlanRequest& req = rep.request;
  if (rep.result.ranked.empty()) {
    std::cout << LoadLine(req)
              << "\nno aggregated layout of these GPUs: " << CliMessage(rep.result.unranked)
              << "\n";
    return;
  }
  const std::string pct = req.slo.PercentileName();
  std::cout << LoadLine(req)
            << fmt::format(
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
  std::cout << table.Render();
}

void PrintText(const api::PlanReport& rep) {
  const shardwise::PlanRequest& req = rep.request;
  std::cout << fmt::format(
      "plan: {} on {} ({} x {}), ISL {} / OSL {}{}, objective {}, {} weights, {} KV\n"
      "{} considered, {} fit in memory, {} in {}\n\n",
      rep.model.name, rep.cluster.name, rep.cluster.num_gpus, rep.cluster.gpu.name,
      req.workload.prompt_tokens, req.workload.output_tokens, LengthSpreadSuffix(req.load.lengths),
      ObjectiveName(req.objective), WeightFormatName(req.perf), DtypeName(req.perf.kv_dtype),
      Counted(rep.result.layouts_considered, "layout", "layouts"), rep.result.layouts_fitting,
      Counted(rep.result.points_evaluated, "(layout, batch) point", "(layout, batch) points"),
      FormatSeconds(rep.elapsed_s));
  PrintRanked(rep);
  const auto& ranked = rep.result.ranked;
  if (std::any_of(ranked.begin(), ranked.end(),
                  [](const PlanEntry& p) { return p.at_load && p.at_load->out_of_phase; })) {
    std::cout << "\nlockstep     fixed lengths keep the clients in step (the means above); each "
                 "layout's loop out of phase\n             is in --json (client_phase), and the "
                 "bands cover both\n";
  }
  if (req.load.kind == PlanLoad::Kind::kConcurrency) {
    std::cout << "\n";
    std::cout << text::MeasuredSpreadText(req.perf.engine, rep.cluster.gpu.name,
                                          "the bands in --json");
  }
  if (!ranked.empty()) std::cout << "\nwhy:\n";
  for (size_t i = 0; i < ranked.size(); ++i) {
    std::cout << fmt::format("  {}. {}\n", i + 1, ranked[i].why);
  }
  std::cout << "\nPareto front of the step model, unsimulated (TPOT: one decode step at the "
               "batch; no point is both faster per user and more productive per GPU):\n";
  Table pareto({"layout", "batch", "tok/s/user", "tok/s/GPU", "TPOT (step)"});
  pareto.SetLeftAligned({0});
  for (const PlanEntry& p : rep.result.pareto) {
    const StepEstimate& e = p.estimate;
    pareto.AddRow({e.layout.ToString(), std::to_string(e.workload.batch),
                   fmt::format("{:.1f}", e.output_tokens_per_s_per_user),
                   fmt::format("{:.1f}", e.output_tokens_per_s_per_gpu), FormatSeconds(e.tpot_s)});
  }
  std::cout << pareto.Render();
  if (rep.searched_disaggregated) {
    std::cout << "\naggregated or disaggregated:\n";
    if (rep.disaggregated) std::cout << "  best split: " << rep.disaggregated->why << "\n";
    std::cout << "  " << rep.verdict.why << "\n";
  }
}

Status RunPlan(PlanOptions& o) {
  api::PlanRequest& r = o.request;
  r.cluster = o.cluster.values;
  r.serving = o.serving.values;
  o.emit.ModelTheLaunched(o.serving.engine, r.serving.engine);
  r.slo = o.slo.values;
  r.lengths = o.spread.Request();
  if (*o.concurrency_option) r.concurrency = o.concurrency;
  if (*o.rate_option) r.rate = o.rate;
  r.disaggregated = o.disagg == "auto";
  o.emit.force = o.html.force;
  SW_RETURN_IF_ERROR(o.emit.Validate(o.emit.force));
  SW_RETURN_IF_ERROR(o.html.Check());
  SW_ASSIGN_OR_RETURN(const api::PlanReport rep, api::Plan(api::Catalog::BuiltIn(), r));
  nlohmann::json out = api::ToJson(rep);
  const EmitOptions& emit = o.emit;
  std::optional<Deployment> chosen;
  if (emit.Enabled()) {
    SW_ASSIGN_OR_RETURN(chosen, api::ChooseDeployment(rep, emit.deployment, emit.Rank()));
  }
  // --emit-benchmark checks the deployment --emit writes (the winner unless one is chosen).
  SW_ASSIGN_OR_RETURN(const api::SavedDeployment question,
                      api::ChosenQuestion(rep, emit.deployment, emit.Rank()));
  StatusOr<Emitted> emitted =
      emit.Make(r.model, rep.model, chosen ? &*chosen : nullptr, rep.request.workload, question);
  if (!emitted.ok() && emit.Enabled() && !emit.Rank()) {
    return api::WithLaunchableRank(rep, emit.engine, emit.deployment, emitted.status());
  }
  SW_RETURN_IF_ERROR(emitted.status());
  PrintNotes(rep.notes);  // after anything --emit may refuse: an error stays one line
  return emit.Finish(*emitted, out, o.json, o.html, [&] { PrintText(rep); });
}

}  // namespace

void AddPlanCommand(CLI::App& app, Status& result) {
  auto opts = std::make_shared<PlanOptions>();
  api::PlanRequest& r = opts->request;
  CLI::App* sub = app.add_subcommand(
      "plan",
      "Rank every valid TP/PP/EP/DP/CP layout of a cluster for a workload: drop what does not\n"
      "fit, respect the SLOs at a percentile, show the Pareto front and why the winners win.\n"
      "Example:\n"
      "  shardwise plan --model llama-3.1-70b --cluster dgx-h100 --nodes 2 --objective latency\n"
      "From answer to deployment, a page with plots and a launch command:\n"
      "  shardwise plan --model llama-3.1-70b --html report.html --emit vllm");
  opts->model =
      sub->add_option("--model", r.model, "Catalog model or config.json")->capture_default_str();
  opts->cluster.AddTo(sub, /*priced=*/true);
  opts->serving.AddTo(sub, true);
  sub->add_option("--isl", r.isl, "Input (prompt) tokens per request: the mean with --isl-dist")
      ->capture_default_str();
  sub->add_option("--osl", r.osl, "Output tokens per request: the mean with --osl-dist")
      ->capture_default_str();
  opts->spread.AddTo(sub);
  sub->add_option("--objective", r.objective, "latency, throughput or cost")->capture_default_str();
  opts->slo.AddTo(sub, "SLO");
  opts->concurrency_option =
      sub->add_option("--concurrency", opts->concurrency,
                      "Rank layouts by what they do for N closed-loop clients (as vllm bench serve "
                      "--max-concurrency); SLOs are checked there");
  opts->rate_option = sub->add_option(
      "--rate", opts->rate,
      "Rank layouts by what they do at R requests/s (Poisson); excludes --concurrency");
  sub->add_option("--top", r.top, "Layouts to show")->capture_default_str();
  sub->add_option("--layout", r.layout, "Evaluate only this layout (choosing its batch)")
      ->check(kLayoutText);
  sub->add_option("--disagg", opts->disagg,
                  "auto: also search prefill/decode disaggregated deployments (xPyD) and say "
                  "which wins; off: aggregated layouts only")
      ->check(CLI::IsMember({"auto", "off"}))
      ->capture_default_str();
  sub->add_flag("--json", opts->json, "Print JSON");
  opts->html.AddTo(sub, true);
  opts->emit.AddTo(sub, EmitScope::kRanked);
  BindCommand(sub, opts, result, [](PlanOptions& o) { return RunPlan(o); });
}

}  // namespace shardwise::cli
