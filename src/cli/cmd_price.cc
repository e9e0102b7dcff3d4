// `shardwise price`: what a million tokens cost at an operating point the deployment holds, and
// how that moves with utilisation, a duty cycle, an API's prices and a demand (api/price.h).
#include <fmt/format.h>

#include <cmath>

#include "command.h"
#include "html_output.h"
#include "request_flags.h"
#include "shardwise/common/format.h"
#include "shardwise/report/table.h"
#include "shardwise/shardwise.h"

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
  SW_ASSIGN_OR_RETURN(const auto saved, LoadReplay(o.deployment, o.serving, o.cluster, o.model));
  if (!saved) return Status();
  api::GivenFields given = GivenOf(o.lengths, o.slo);
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

std::string PointLine(const api::PriceReport& rep) {
  const OperatingPoint& p = rep.point;
  std::string how;
  switch (rep.priced_at) {
    case api::PricedAt::kLoad:
      how = "at the load given";
      break;
    case api::PricedAt::kMostWithinSlo: {
      // The limits given (an SLO not given is no limit, not "<= inf s").
      std::string limits;
      for (const auto& [name, limit] :
           {std::pair{"TTFT", rep.slo.max_ttft_s}, std::pair{"TPOT", rep.slo.max_tpot_s}}) {
        if (!std::isfinite(limit)) continue;
        limits += fmt::format("{}{} {} <= {}", limits.empty() ? "" : ", ", rep.slo.PercentileName(),
                              name, FormatSeconds(limit));
      }
      how = fmt::format("the most clients within the SLOs ({})", limits);
      break;
    }
    case api::PricedAt::kBestBatch:
      how = "its best batch, as plan ranks it (give SLOs or a load to price another point)";
      break;
  }
  return fmt::format(
      "operating point: {:.0f} requests in flight, {}; {} TTFT {}, TPOT {} ({:.1f} tokens/s per "
      "user), {:.0f} output tokens/s\n",
      p.concurrency, how, rep.slo.PercentileName(), FormatSeconds(p.ttft.at_slo_s),
      FormatSeconds(p.tpot.at_slo_s), p.output_tokens_per_s_per_user, p.output_tokens_per_s);
}

void PrintBreakEven(const api::PriceReport& rep) {
  const BreakEven& b = rep.break_even;
  auto verdict = [&](const std::string& what, double u) {
    return u <= 1.0 ? fmt::format("break-even {}: {:.1f}% utilisation of the busy hours\n", what,
                                  100 * u)
                    : fmt::format(
                          "break-even {}: never (needs {:.0f}% utilisation); the API is "
                          "cheaper\n",
                          what, 100 * u);
  };
  if (b.input) {
    std::cout << verdict(
        fmt::format("against ${:g}/Mtok input (its input split)", *rep.api_usd_per_mtok_input),
        *b.input);
  }
  if (b.output) {
    std::cout << verdict(
        fmt::format("against ${:g}/Mtok output (its output split)", *rep.api_usd_per_mtok_output),
        *b.output);
  }
  if (b.bill) {
    std::cout << verdict("of the whole bill against the API's charge for the same tokens", *b.bill);
  }
}

void PrintText(const api::PriceReport& rep) {
  const Deployment& d = rep.deployment;
  std::cout << fmt::format("price: {} on {}, {} ({}), ISL {} / OSL {}, ${:.2f} per hour\n",
                           rep.model.name, rep.cluster.name, d.ToString(),
                           Counted(d.gpus(), "GPU", "GPUs"), rep.saved.isl, rep.saved.osl,
                           rep.usd_per_hour);
  std::cout << PointLine(rep);
  std::cout << fmt::format(
      "=> ${:.4f} per million output tokens (the whole bill over the output tokens, always "
      "busy); {:.0f}% of the GPU time is prefill\n",
      rep.usd_per_mtok_output, 100 * rep.inputs.input_time_share);
  std::cout << "energy: " << FormatEnergy(rep.board_power_w, rep.joules_per_output_token);
  if (rep.electricity_usd_per_mtok_output) {
    std::cout << fmt::format("; ${:.4f} of electricity per million output tokens at ${:g}/kWh",
                             *rep.electricity_usd_per_mtok_output, *rep.usd_per_kwh);
  }
  std::cout << "\n\n";
  std::cout << fmt::format(
      "cost per million tokens at a {:.0f}% duty cycle (paid for every hour, busy {:.0f}% of "
      "them: x{:.2f} the full-load price)\n",
      100 * rep.duty_cycle, 100 * rep.duty_cycle, DutyCycleMultiplier(rep.duty_cycle));
  std::cout << fmt::format(
      "($/Mtok output bills every GPU-hour to the output tokens; the split columns divide the "
      "bill by GPU time, {:.0f}% to the input tokens and the rest to the output tokens, each in $ "
      "per million of its own tokens)\n",
      100 * rep.inputs.input_time_share);
  Table table({"utilization", "$/Mtok output", "$/Mtok input, split", "$/Mtok output, split"});
  for (const PricePoint& p : rep.curve) {
    table.AddRow({fmt::format("{:.0f}%", 100 * p.utilization),
                  fmt::format("{:.4f}", p.usd_per_mtok_output),
                  fmt::format("{:.4f}", p.usd_per_mtok_input_share),
                  fmt::format("{:.4f}", p.usd_per_mtok_output_share)});
  }
  std::cout << table.Render();
  PrintBreakEven(rep);
  if (rep.sizing) {
    const DemandSizing& s = *rep.sizing;
    std::cout << fmt::format(
        "demand of {:g} output tokens/s: {} like this = {}, running {:.1f}% "
        "utilised (at most {:.0f}% allowed by --target-utilization)\n",
        s.demand_output_tokens_per_s, Counted(s.replicas, "deployment", "deployments"),
        Counted(s.gpus, "GPU", "GPUs"), 100 * s.utilization, 100 * s.target_utilization);
  }
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
    PrintText(rep);
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
  opts->deployment.AddTo(sub, "Parallel layout (default: the planner's best)");
  opts->lengths = {
      sub->add_option("--isl", r.isl, "Prompt tokens per request")->capture_default_str(),
      sub->add_option("--osl", r.osl, "Output tokens per request")->capture_default_str()};
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
