// `shardwise price`: what a million tokens cost at an operating point the deployment holds, and
// how that moves with utilisation, a duty cycle, an API's prices and a demand (api/price.h).
#include "command.h"
#include "html_output.h"
#include "request_flags.h"
#include "shardwise/shardwise.h"
#include "shardwise/text/text.h"

namespace shardwise::cli {
namespace {

struct PriceOptions {
  api::PriceRequest request;
  CLI::Option* model = nullptr;
  ClusterFlags cluster;
  ServingFlags serving;
  DeploymentFlags deployment;
  SloFlags slo;
  std::vector<CLI::Option*> lengths;
  LengthSpreadFlags spread;
  std::vector<CLI::Option*> load;
  bool json = false;
  HtmlOptions html;
};

Status BuildRequest(PriceOptions& o) {
  api::PriceRequest& r = o.request;
  r.cluster = o.cluster.values;
  r.serving = o.serving.values;
  r.deployment = o.deployment.values;
  r.slo = o.slo.values;
  r.generator.lengths = o.spread.Request();
  SW_ASSIGN_OR_RETURN(const auto saved, LoadReplay(o.deployment, o.serving, o.cluster, o.model));
  if (!saved) return Status();
  api::GivenFields given = GivenOf(o.lengths, o.slo, &o.spread);
  given.load = AnyGiven(o.load);
  api::Replay(*saved, given, r);
  if (saved->offline && !given.load) {
    PrintNotes(
        {"the saved run was offline (every request at t = 0, drained); price prices the "
         "deployment at its best batch, a closed loop that keeps it busy, so its "
         "latencies are not that run's: give `rate` or `concurrency` to price a load"});
  }
  return Status();
}

Status RunPrice(PriceOptions& o) {
  SW_RETURN_IF_ERROR(BuildRequest(o));
  SW_RETURN_IF_ERROR(o.html.Check());
  SW_ASSIGN_OR_RETURN(const api::PriceReport rep, api::Price(api::Catalog::BuiltIn(), o.request));
  PrintNotes(rep.notes);
  const nlohmann::json out = api::ToJson(rep);
  if (o.json) {
    PrintJson(out);
  } else {
    std::cout << CliText(text::PriceText(rep));
  }
  return o.html.Write(out);
}

}  // namespace

void AddPriceCommand(CLI::App& app, Status& result) {
  auto opts = std::make_shared<PriceOptions>();
  api::PriceRequest& r = opts->request;
  CLI::App* sub = app.add_subcommand(
      "price",
      "Cost per million output tokens at an operating point the deployment holds (the load\n"
      "given, else the most load within the SLOs, else its best batch), versus utilisation,\n"
      "a duty cycle, an API's prices, and the GPUs a sustained demand keeps busy. Example:\n"
      "  shardwise price --model llama-3.1-70b --layout tp4 --max-tpot-ms 30 --max-ttft-ms 1000");
  opts->model =
      sub->add_option("--model", r.model, "Catalog model or config.json")->capture_default_str();
  opts->cluster.AddTo(sub, /*priced=*/true);
  opts->serving.AddTo(sub, true);
  opts->deployment.AddTo(
      sub,
      "Parallel layout (default: plan's best for the lengths, ranked offline; plan "
      "--rate or --concurrency ranks layouts at a load)");
  opts->lengths = {
      sub->add_option("--isl", r.isl, "Prompt tokens per request: the mean with --isl-dist")
          ->capture_default_str(),
      sub->add_option("--osl", r.osl, "Output tokens per request: the mean with --osl-dist")
          ->capture_default_str()};
  opts->spread.AddTo(sub);
  opts->slo.AddTo(sub, "SLO (price the most load within it)");
  opts->load = {
      sub->add_option("--rate", r.rate, "Price at this many requests/s (Poisson)"),
      sub->add_option("--concurrency", r.concurrency, "Price at this many closed-loop clients")};
  sub->add_option("--usd-per-kwh", r.usd_per_kwh,
                  "Electricity price: adds its $ per million output tokens (GPU boards at rated "
                  "power)");
  sub->add_option("--duty-cycle", r.duty_cycle, "Fraction of the time the GPUs have work")
      ->capture_default_str();
  sub->add_option("--api-usd-per-mtok-output,--api-usd-per-mtok", r.api_usd_per_mtok_output,
                  "An API's price per million output tokens, for break-even "
                  "(--api-usd-per-mtok is an alias)");
  sub->add_option("--api-usd-per-mtok-input", r.api_usd_per_mtok_input,
                  "An API's price per million input tokens; with both prices the whole bill is "
                  "compared too");
  sub->add_option("--demand-tokens-per-s", r.demand_tokens_per_s,
                  "Sustained output tokens/s to size the deployment for");
  sub->add_option("--target-utilization", r.target_utilization,
                  "Busiest a deployment may run when sizing by demand; the rest is headroom for "
                  "bursts (assumed default 0.8)")
      ->capture_default_str();
  sub->add_flag("--json", opts->json, "Print JSON");
  opts->html.AddTo(sub);
  BindCommand(sub, opts, result,
              [sub](PriceOptions& o) { return FromReplay(RunPrice(o), o.deployment, *sub); });
}

}  // namespace shardwise::cli
