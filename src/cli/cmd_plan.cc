// `shardwise plan`: every valid layout of a cluster, ranked by an objective under SLOs
// (api/plan.h).
#include "command.h"
#include "emit_options.h"
#include "html_output.h"
#include "request_flags.h"
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
  return emit.Finish(*emitted, out, o.json, o.html,
                     [&] { std::cout << CliText(text::PlanText(rep)); });
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
