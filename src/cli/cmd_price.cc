// `shardwise price`: cost per million tokens versus utilisation, duty cycle, API break-even and
// sizing by demand, for one layout.
#include <fmt/format.h>

#include <optional>

#include "cluster_options.h"
#include "command.h"
#include "disagg_options.h"
#include "html_output.h"
#include "perf_options.h"
#include "shardwise/model/catalog.h"
#include "shardwise/plan/planner.h"
#include "shardwise/price/price.h"
#include "shardwise/report/table.h"

namespace shardwise::cli {
namespace {

struct PriceOptions {
  std::string model = "llama-3.1-70b";
  ClusterOptions cluster;
  PerfCliOptions perf;
  std::string layout;
  DisaggCliOptions disagg;
  int64_t isl = 1024;
  int64_t osl = 256;
  std::optional<double> usd_per_gpu_hour;
  double duty_cycle = 1.0;
  std::optional<double> api_usd_per_mtok_input;
  std::optional<double> api_usd_per_mtok_output;
  double target_utilization = 0.8;
  std::optional<double> demand_tokens_per_s;
  bool json = false;
  HtmlOptions html;
};

// What is priced: a layout at its best batch, or a disaggregated deployment at its decode
// workers' largest batch.
struct Priced {
  std::string name;
  int64_t batch = 0;  // per replica, or per decode worker
  PriceInputs inputs;
  nlohmann::json deployment_json;  // null when aggregated
  nlohmann::json moe_json;
};

StatusOr<Priced> PriceAggregated(const PriceOptions& o, const ModelSpec& model,
                                 const ClusterSpec& cluster, PlanRequest req, double usd) {
  if (!o.layout.empty()) {
    SW_ASSIGN_OR_RETURN(Layout only, ParseLayout(o.layout));
    SW_RETURN_IF_ERROR(CheckRedundantExperts(only, req.perf));
    req.only_layout = only;
  }
  SW_ASSIGN_OR_RETURN(PlanResult plan, Plan(model, cluster, req));
  const StepEstimate& e = plan.ranked.front().estimate;
  Priced p;
  p.name = "layout " + e.layout.ToString();
  p.batch = e.workload.batch;
  p.inputs = PriceInputsFrom(e, usd);
  p.moe_json = MoeJson(model, e.layout, req.perf);
  return p;
}

StatusOr<Priced> PriceDisaggregated(const PriceOptions& o, const ModelSpec& model,
                                    const ClusterSpec& cluster, const PlanRequest& req,
                                    double usd) {
  SW_ASSIGN_OR_RETURN(DisaggSetup d, BuildDisaggSetup(o.disagg, cluster, !o.layout.empty()));
  const Deployment& dep = d.deployment;
  SW_RETURN_IF_ERROR(d.CheckPools(req.perf));
  PlanRequest prefill_req = req, decode_req = req;
  prefill_req.perf = d.PrefillPerf(req.perf);
  prefill_req.only_layout = dep.prefill.layout;
  decode_req.only_layout = dep.decode->layout;
  auto prefill = Plan(model, d.prefill_cluster, prefill_req);
  if (!prefill.ok()) return Error("the prefill layout: " + prefill.status().message());
  auto decode = Plan(model, d.decode_cluster, decode_req);
  if (!decode.ok()) return Error("the decode layout: " + decode.status().message());
  const StepEstimate& p = prefill->ranked.front().estimate;
  const StepEstimate& e = decode->ranked.front().estimate;  // its best batch
  const double prefill_per_s =
      static_cast<double>(dep.prefill.workers * p.layout.Replicas()) / p.prefill_s_per_request;
  const double decode_per_s = static_cast<double>(dep.decode->workers) *
                              static_cast<double>(e.workload.batch) /
                              (static_cast<double>(o.osl) * e.tpot_s);
  // --usd-per-gpu-hour prices the --cluster's GPUs; the prefill cluster's keep the catalog's.
  const double prefill_usd = d.same_cluster ? usd : d.prefill_cluster.gpu.usd_per_gpu_hour;
  Priced out;
  out.name = "deployment " + dep.ToString();
  out.batch = e.workload.batch;
  out.inputs = DisaggregatedPriceInputs(dep.prefill.Gpus(), prefill_usd, dep.decode->Gpus(), usd,
                                        std::min(prefill_per_s, decode_per_s), o.isl, o.osl);
  out.deployment_json = {{"disaggregated", true},
                         {"prefill",
                          {{"layout", dep.prefill.layout.ToString()},
                           {"workers", dep.prefill.workers},
                           {"cluster", d.prefill_cluster.name},
                           {"requests_per_s", prefill_per_s}}},
                         {"decode",
                          {{"layout", dep.decode->layout.ToString()},
                           {"workers", dep.decode->workers},
                           {"cluster", d.decode_cluster.name},
                           {"batch_per_worker", e.workload.batch},
                           {"requests_per_s", decode_per_s}}}};
  out.moe_json = MoeJson(model, dep.decode->layout, req.perf);
  return out;
}

Status RunPrice(const PriceOptions& o) {
  SW_ASSIGN_OR_RETURN(ModelSpec model, LoadModel(o.model));
  SW_ASSIGN_OR_RETURN(ClusterSpec cluster, o.cluster.Load());
  SW_RETURN_IF_ERROR(o.html.Check());
  PlanRequest req;
  SW_ASSIGN_OR_RETURN(req.perf, o.perf.Build(model));
  if (o.isl < 1 || o.osl < 1) return Error("--isl and --osl must be positive");
  if (!(o.duty_cycle > 0 && o.duty_cycle <= 1)) return Error("--duty-cycle must be in (0, 1]");
  if (o.usd_per_gpu_hour && !(*o.usd_per_gpu_hour > 0))
    return Error("--usd-per-gpu-hour must be positive");
  for (const auto& [price, name] :
       {std::pair{o.api_usd_per_mtok_input, "--api-usd-per-mtok-input"},
        std::pair{o.api_usd_per_mtok_output, "--api-usd-per-mtok-output"}}) {
    if (price && !(*price > 0 && *price < 1e6)) {
      return Error(fmt::format("{} must be a positive price in $ per million tokens", name));
    }
  }
  if (o.demand_tokens_per_s && !(*o.demand_tokens_per_s > 0)) {
    return Error("--demand-tokens-per-s must be positive");
  }
  req.workload.prompt_tokens = o.isl;
  req.workload.output_tokens = o.osl;
  const double usd = o.usd_per_gpu_hour.value_or(cluster.gpu.usd_per_gpu_hour);
  SW_ASSIGN_OR_RETURN(const Priced priced, o.disagg.Given()
                                               ? PriceDisaggregated(o, model, cluster, req, usd)
                                               : PriceAggregated(o, model, cluster, req, usd));
  PrintFormatNotes(cluster.gpu, req.perf);
  const PriceInputs& in = priced.inputs;
  const double duty = DutyCycleMultiplier(o.duty_cycle);

  // Every price is what a token really costs: at `utilization` of the busy hours, busy
  // `duty_cycle` of the day, paid for the whole day.
  auto at_duty = [&](PricePoint p) {
    p.usd_per_mtok_input *= duty;
    p.usd_per_mtok_output *= duty;
    return p;
  };
  std::vector<PricePoint> curve;
  for (int pct = 10; pct <= 100; pct += 10) curve.push_back(at_duty(PriceAt(in, pct / 100.0)));
  const PricePoint full = PriceAt(in, 1.0);
  const BreakEven break_even =
      BreakEvenUtilization(in, o.duty_cycle, o.api_usd_per_mtok_input, o.api_usd_per_mtok_output);
  std::optional<DemandSizing> sizing;
  if (o.demand_tokens_per_s) {
    SW_ASSIGN_OR_RETURN(sizing, SizeForDemand(in, *o.demand_tokens_per_s, o.target_utilization));
  }

  nlohmann::json out;
  {
    nlohmann::json points = nlohmann::json::array();
    for (const PricePoint& p : curve) {
      points.push_back({{"utilization", p.utilization},
                        {"usd_per_mtok_input", p.usd_per_mtok_input},
                        {"usd_per_mtok_output", p.usd_per_mtok_output}});
    }
    auto optional = [](const std::optional<double>& v) {
      return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
    };
    out = {{"command", "price"},
           {"model", model.name},
           {"cluster", cluster.name},
           {"layout", priced.name},
           {"deployment", priced.deployment_json},
           {"batch", priced.batch},
           {"moe", priced.moe_json},
           {"speculative", SpeculativeJson(req.perf.speculative)},
           {"prefix_hit_rate", req.perf.prefix_hit_rate},
           {"isl", o.isl},
           {"osl", o.osl},
           {"usd_per_gpu_hour", usd},
           {"gpus_per_replica", in.gpus_per_replica},
           {"replica",
            {{"output_tokens_per_s", in.replica_output_tokens_per_s},
             {"input_tokens_per_s", in.replica_input_tokens_per_s},
             {"prefill_time_fraction", in.input_time_share}}},
           {"duty_cycle", {{"fraction", o.duty_cycle}, {"cost_multiplier", duty}}},
           {"full_load",
            {{"usd_per_mtok_input", full.usd_per_mtok_input},
             {"usd_per_mtok_output", full.usd_per_mtok_output}}},
           {"at_duty_cycle",
            {{"usd_per_mtok_input", full.usd_per_mtok_input * duty},
             {"usd_per_mtok_output", full.usd_per_mtok_output * duty}}},
           {"curve", points},
           {"break_even",
            {{"api_usd_per_mtok_input", optional(o.api_usd_per_mtok_input)},
             {"api_usd_per_mtok_output", optional(o.api_usd_per_mtok_output)},
             {"input_utilization", optional(break_even.input)},
             {"output_utilization", optional(break_even.output)},
             {"bill_utilization", optional(break_even.bill)}}}};
    if (sizing) {
      out["demand"] = {{"output_tokens_per_s", sizing->demand_output_tokens_per_s},
                       {"target_utilization", sizing->target_utilization},
                       {"replicas", sizing->replicas},
                       {"gpus", sizing->gpus},
                       {"utilization", sizing->utilization}};
    }
  }
  if (o.json) {
    PrintJson(out);
    return o.html.Write(out);
  }
  std::cout << fmt::format(
      "price: {} on {}, {} at batch {}, ISL {} / OSL {}, ${:.2f} per GPU-hour\n"
      "one replica ({} GPUs) at full load: {:.0f} output and {:.0f} input tokens/s "
      "({:.0f}% of its cost on prefill)\n\n",
      model.name, cluster.name, priced.name, priced.batch, o.isl, o.osl, in.usd_per_gpu_hour,
      in.gpus_per_replica, in.replica_output_tokens_per_s, in.replica_input_tokens_per_s,
      100 * in.input_time_share);
  std::cout << fmt::format(
      "cost per million tokens at a {:.0f}% duty cycle (paid for every hour, busy {:.0f}% of "
      "them: x{:.2f} the full-load price)\n",
      100 * o.duty_cycle, 100 * o.duty_cycle, duty);
  Table table({"utilization", "$/Mtok input", "$/Mtok output"});
  for (const PricePoint& p : curve) {
    table.AddRow({fmt::format("{:.0f}%", 100 * p.utilization),
                  fmt::format("{:.4f}", p.usd_per_mtok_input),
                  fmt::format("{:.4f}", p.usd_per_mtok_output)});
  }
  std::cout << table.Render();
  std::cout << fmt::format("\nfull load, always busy: ${:.4f} input and ${:.4f} output per Mtok\n",
                           full.usd_per_mtok_input, full.usd_per_mtok_output);
  auto verdict = [&](const char* what, double u) {
    return u <= 1.0 ? fmt::format("break-even {}: {:.1f}% utilisation of the busy hours\n", what,
                                  100 * u)
                    : fmt::format(
                          "break-even {}: never (needs {:.0f}% utilisation); the API is "
                          "cheaper\n",
                          what, 100 * u);
  };
  if (break_even.input) {
    std::cout << verdict(fmt::format("against ${:g}/Mtok input", *o.api_usd_per_mtok_input).c_str(),
                         *break_even.input);
  }
  if (break_even.output) {
    std::cout << verdict(
        fmt::format("against ${:g}/Mtok output", *o.api_usd_per_mtok_output).c_str(),
        *break_even.output);
  }
  if (break_even.bill) {
    std::cout << verdict("of the whole bill against the API's charge for the same tokens",
                         *break_even.bill);
  }
  if (sizing) {
    std::cout << fmt::format(
        "demand of {:.0f} output tokens/s: {} replicas = {} GPUs, running {:.1f}% utilised "
        "(at most {:.0f}% allowed by --target-utilization)\n",
        sizing->demand_output_tokens_per_s, sizing->replicas, sizing->gpus,
        100 * sizing->utilization, 100 * sizing->target_utilization);
  }
  return o.html.Write(out);
}

}  // namespace

void AddPriceCommand(CLI::App& app, Status& result) {
  auto opts = std::make_shared<PriceOptions>();
  CLI::App* sub = app.add_subcommand(
      "price",
      "Cost per million input and output tokens versus utilisation, the effect of a duty\n"
      "cycle, break-even against an API price, and the GPUs a sustained demand keeps busy.\n"
      "Example: shardwise price --model llama-3.1-70b --layout tp4 --duty-cycle 0.4 "
      "--api-usd-per-mtok 0.9");
  sub->add_option("--model", opts->model, "Catalog model or config.json")->capture_default_str();
  opts->cluster.AddTo(sub);
  opts->perf.AddTo(sub);
  sub->add_option("--layout", opts->layout, "Parallel layout (default: the planner's best)");
  opts->disagg.AddTo(sub);
  sub->add_option("--isl", opts->isl, "Prompt tokens per request")->capture_default_str();
  sub->add_option("--osl", opts->osl, "Output tokens per request")->capture_default_str();
  sub->add_option("--usd-per-gpu-hour", opts->usd_per_gpu_hour, "GPU price (default: catalog)");
  sub->add_option("--duty-cycle", opts->duty_cycle, "Fraction of the time the GPUs have work")
      ->capture_default_str();
  sub->add_option("--api-usd-per-mtok-output,--api-usd-per-mtok", opts->api_usd_per_mtok_output,
                  "An API's price per million output tokens, for break-even "
                  "(--api-usd-per-mtok is an alias)");
  sub->add_option("--api-usd-per-mtok-input", opts->api_usd_per_mtok_input,
                  "An API's price per million input tokens; with both prices the whole bill is "
                  "compared too");
  sub->add_option("--demand-tokens-per-s", opts->demand_tokens_per_s,
                  "Sustained output tokens/s to size the deployment for");
  sub->add_option("--target-utilization", opts->target_utilization,
                  "Busiest a replica may run when sizing by demand; the rest is headroom for "
                  "bursts (assumed default 0.8)")
      ->capture_default_str();
  sub->add_flag("--json", opts->json, "Print JSON");
  opts->html.AddTo(sub);
  BindCommand(sub, opts, result, RunPrice);
}

}  // namespace shardwise::cli
