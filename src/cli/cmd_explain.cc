// `shardwise explain`: one deployment per phase: where the time goes, what binds, memory per GPU
// (api/explain.h).

#include "command.h"
#include "html_output.h"
#include "request_flags.h"
#include "shardwise/shardwise.h"
#include "shardwise/text/text.h"

namespace shardwise::cli {
namespace {

struct ExplainOptions {
  api::ExplainRequest request;
  CLI::Option* model = nullptr;
  ClusterFlags cluster;
  ServingFlags serving;
  DeploymentFlags deployment;
  CLI::Option* context = nullptr;
  CLI::Option* osl = nullptr;
  CLI::Option* batch = nullptr;
  bool json = false;
  HtmlOptions html;
};

Status RunExplain(ExplainOptions& o) {
  api::ExplainRequest& r = o.request;
  r.cluster = o.cluster.values;
  r.serving = o.serving.values;
  r.deployment = o.deployment.values;
  SW_ASSIGN_OR_RETURN(const auto saved, LoadReplay(o.deployment, o.serving, o.cluster, o.model));
  if (saved) {
    api::GivenFields given;
    given.isl = Given(o.context);
    given.osl = Given(o.osl);
    given.batch = Given(o.batch);
    SW_RETURN_IF_ERROR(api::Replay(*saved, given, r));
  } else if (r.deployment.Disaggregated()) {
    if (o.deployment.LayoutGiven()) {
      return Error(
          "give --layout (aggregated) or --prefill-layout and --decode-layout "
          "(disaggregated), not both");
    }
    r.deployment.layout.clear();
  }
  SW_RETURN_IF_ERROR(o.html.Check());
  SW_ASSIGN_OR_RETURN(const api::Explanation e, api::Explain(api::Catalog::BuiltIn(), r));
  PrintNotes(e.notes);
  const nlohmann::json out = api::ToJson(e);
  if (o.json) {
    PrintJson(out);
  } else {
    std::cout << text::ExplainText(e);
  }
  return o.html.Write(out);
}

}  // namespace

void AddExplainCommand(CLI::App& app, Status& result) {
  auto opts = std::make_shared<ExplainOptions>();
  api::ExplainRequest& r = opts->request;
  CLI::App* sub = app.add_subcommand(
      "explain",
      "One layout in detail: prefill and decode time split into compute, memory, each\n"
      "communication and the pipeline bubble; TTFT, TPOT, throughput; memory per GPU.\n"
      "Layouts: tp8pp2, ep16 (= dp16ep16), tp4ep8dp2, dp2tp4cp2. Example:\n"
      "  shardwise explain --model llama-3.1-70b --cluster dgx-h100 --nodes 2 --layout tp16");
  opts->model =
      sub->add_option("--model", r.model, "Catalog model or config.json")->capture_default_str();
  opts->cluster.AddTo(sub, /*priced=*/true);
  opts->serving.AddTo(sub, false);
  opts->deployment.values.layout = "tp8";
  opts->deployment.AddTo(sub, "Parallel layout (default tp8)");
  opts->batch =
      sub->add_option("--batch", r.batch, "Concurrent sequences per replica (or per decode worker)")
          ->capture_default_str();
  opts->context =
      sub->add_option("--context,--isl", r.context,
                      "Prompt length, tokens, at which decode's KV is taken too (the other "
                      "commands' --isl; they average decode's KV over the output)")
          ->capture_default_str();
  opts->osl = sub->add_option("--osl", r.osl, "Output tokens per request (throughput)")
                  ->capture_default_str();
  sub->add_flag("--json", opts->json, "Print JSON");
  opts->html.AddTo(sub);
  BindCommand(sub, opts, result,
              [sub](ExplainOptions& o) { return FromReplay(RunExplain(o), o.deployment, *sub); });
}

}  // namespace shardwise::cli
