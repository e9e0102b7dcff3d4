// `shardwise recommend`: the fewest GPUs (or the cheapest) serving a request rate within SLOs at
// a percentile, every answer verified by the steady-state simulation; without --rate, the most
// load a cluster serves so (api/recommend.h).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <set>

#include "command.h"
#include "emit_options.h"
#include "html_output.h"
#include "request_flags.h"
#include "shardwise/shardwise.h"
#include "shardwise/text/text.h"
#include "validators.h"

namespace shardwise::cli {
namespace {

struct RecommendOptions {
  api::RecommendRequest request;
  ClusterFlags cluster;  // --cluster may name several, comma-separated
  ServingFlags serving;
  SloFlags slo;
  LengthSpreadFlags spread;
  std::string disagg = "auto";
  bool json = false;
  HtmlOptions html;
  EmitOptions emit;
  CLI::Option* rate = nullptr;      // given: a rate to serve, not "the most"
  CLI::Option* max_gpus = nullptr;  // given: bounds a rate's search
};

std::vector<std::string> SplitNames(const std::string& text) {
  std::vector<std::string> names;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    names.push_back(text.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return names;
}

Status RunRecommend(RecommendOptions& o) {
  api::RecommendRequest& r = o.request;
  // The request's rate 0 means "find the most": a rate given must be one to serve (any other
  // is checked as every command checks it).
  if (o.rate->count() && r.rate == 0) {
    return Error(fmt::format(
        "--rate must be requests per second between {:g} and {:g}, got 0; omit it to find the "
        "most load the cluster serves within the SLOs",
        api::kMinRatePerS, api::kMaxRatePerS));
  }
  if (o.max_gpus->count() && !o.rate->count()) {
    return Error(
        "--max-gpus bounds the search for the fewest GPUs serving a --rate; without one, "
        "recommend finds the most load of the cluster given (--nodes or --gpus size it)");
  }
  r.serving = o.serving.values;
  o.emit.ModelTheLaunched(o.serving.engine, r.serving.engine);
  r.slo = o.slo.values;
  r.lengths = o.spread.Request();
  r.disaggregated = o.disagg == "auto";
  r.clusters.clear();
  const std::vector<std::string> names = SplitNames(o.cluster.values.name);
  if (names.size() > 1 && !o.cluster.values.profile.empty()) {
    return Error("--profile measures one cluster; give a single --cluster with it");
  }
  if (names.size() > 1 && o.cluster.values.usd_per_gpu_hour) {
    // One price is one GPU type's: clusters of several types each need their own.
    std::set<std::string> gpus;
    for (const std::string& name : names) {
      api::ClusterRef ref;
      ref.name = name;
      SW_ASSIGN_OR_RETURN(const ClusterSpec c, api::Catalog::BuiltIn().Cluster(ref));
      gpus.insert(c.gpu.name);
    }
    if (gpus.size() > 1) {
      return Error(fmt::format(
          "--usd-per-gpu-hour prices one GPU type, and these clusters hold {}: run recommend on "
          "each cluster at its price with --json, then 'shardwise compare A.json B.json'",
          fmt::join(gpus, " and ")));
    }
  }
  for (const std::string& name : names) {
    api::ClusterRef ref = o.cluster.values;
    ref.name = name;
    r.clusters.push_back(ref);
  }
  o.emit.force = o.html.force;
  SW_RETURN_IF_ERROR(o.emit.Validate(o.emit.force));
  SW_RETURN_IF_ERROR(o.html.Check());
  SW_ASSIGN_OR_RETURN(const api::RecommendReport rep, api::Recommend(api::Catalog::BuiltIn(), r));
  nlohmann::json out = api::ToJson(rep);
  const EmitOptions& emit = o.emit;
  SW_ASSIGN_OR_RETURN(const Emitted emitted,
                      emit.Make(r.model, rep.model, &rep.result.best->deployment,
                                rep.request.plan.workload, rep.saved));
  PrintNotes(rep.notes);  // after anything --emit may refuse: an error stays one line
  return emit.Finish(emitted, out, o.json, o.html, [&] { std::cout << text::RecommendText(rep); });
}

}  // namespace

void AddRecommendCommand(CLI::App& app, Status& result) {
  auto opts = std::make_shared<RecommendOptions>();
  api::RecommendRequest& r = opts->request;
  CLI::App* sub = app.add_subcommand(
      "recommend",
      "The fewest GPUs (layout and replicas, or prefill/decode pools) that serve a request rate\n"
      "within TTFT and TPOT SLOs at a percentile, each answer checked by the steady-state\n"
      "serving simulation; without --rate, the most load the given cluster serves so. Examples:\n"
      "  shardwise recommend --model deepseek-r1 --cluster dgx-h200 --rate 20 --isl 2048 \\\n"
      "      --osl 1024 --max-ttft-ms 2000 --max-tpot-ms 50\n"
      "  shardwise recommend --model llama-3.1-70b --cluster dgx-h100 --nodes 2 \\\n"
      "      --max-ttft-ms 1000 --max-tpot-ms 50\n"
      "Several clusters (comma-separated) are compared; --objective cost picks the cheapest per\n"
      "token at the load:\n"
      "  shardwise recommend --model llama-3.1-70b --cluster dgx-h100,dgx-a100,dgx-b200 \\\n"
      "      --rate 20 --max-ttft-ms 1000 --max-tpot-ms 50 --objective cost");
  sub->add_option("--model", r.model, "Catalog model or config.json")->capture_default_str();
  opts->cluster.AddTo(sub, /*priced=*/true);
  opts->serving.AddTo(sub, true);
  opts->rate =
      sub->add_option("--rate", r.rate, "Requests per second to serve (omit: find the most)");
  sub->add_option("--isl", r.isl, "Prompt tokens per request: the mean with --isl-dist")
      ->capture_default_str();
  sub->add_option("--osl", r.osl, "Output tokens per request: the mean with --osl-dist")
      ->capture_default_str();
  opts->spread.AddTo(sub);
  opts->slo.AddTo(sub, "SLO (required)");
  opts->max_gpus =
      sub->add_option("--max-gpus", r.max_gpus, "Largest deployment to try (with --rate)")
          ->capture_default_str();
  sub->add_option("--requests", r.requests,
                  "Requests simulated per check, 50 to 1,000,000 (default: as many as the steady "
                  "state needs)")
      ->check(CLI::Range(int64_t{50}, int64_t{1'000'000}));
  sub->add_option("--seed", r.seed, "Random seed of the arrivals")
      ->check(kUnsignedInteger)
      ->capture_default_str();
  sub->add_option("--objective", r.objective,
                  "gpus: the fewest GPUs for the rate (or the most load of the GPUs given); "
                  "cost: the lowest $ per million output tokens at the load")
      ->capture_default_str();
  sub->add_option("--disagg", opts->disagg,
                  "auto: also search prefill/decode disaggregated deployments (xPyD); off: "
                  "aggregated layouts only")
      ->check(CLI::IsMember({"auto", "off"}))
      ->capture_default_str();
  sub->add_flag("--json", opts->json, "Print JSON");
  opts->html.AddTo(sub, true);
  opts->emit.AddTo(sub, EmitScope::kAnswer);
  BindCommand(sub, opts, result, [](RecommendOptions& o) { return RunRecommend(o); });
}

}  // namespace shardwise::cli
