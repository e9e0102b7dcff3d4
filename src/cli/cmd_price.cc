// `shardwise price`: cost per million tokens versus utilisation, duty cycle, API break-even and
// sizing by demand, for one layout.
#include <optional>

#include <fmt/format.h>

#include "cluster_options.h"
#include "command.h"
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
  int64_t isl = 1024;
  int64_t osl = 256;
  std::optional<double> usd_per_gpu_hour;
  double duty_cycle = 1.0;
  std::optional<double> api_usd_per_mtok;
  std::optional<double> demand_tokens_per_s;
  bool json = false;
};

Status RunPrice(const PriceOptions& o) {
  SW_ASSIGN_OR_RETURN(ModelSpec model, LoadModel(o.model));
  SW_ASSIGN_OR_RETURN(ClusterSpec cluster, o.cluster.Load());
  PlanRequest req;
  SW_ASSIGN_OR_RETURN(req.perf, o.perf.Build(model));
  if (o.isl < 1 || o.osl < 1) return Error("--isl and --osl must be positive");
  if (!(o.duty_cycle > 0 && o.duty_cycle <= 1)) return Error("--duty-cycle must be in (0, 1]");
  if (o.usd_per_gpu_hour && !(*o.usd_per_gpu_hour > 0)) return Error("--usd-per-gpu-hour must be positive");
  if (o.api_usd_per_mtok && !(*o.api_usd_per_mtok > 0)) return Error("--api-usd-per-mtok must be positive");
  if (o.demand_tokens_per_s && !(*o.demand_tokens_per_s > 0)) {
    return Error("--demand-tokens-per-s must be positive");
  }
  req.workload.prompt_tokens = o.isl;
  req.workload.output_tokens = o.osl;
  if (!o.layout.empty()) {
    SW_ASSIGN_OR_RETURN(Layout only, ParseLayout(o.layout));
    req.only_layout = only;
  }
  SW_ASSIGN_OR_RETURN(PlanResult plan, Plan(model, cluster, req));
  const StepEstimate& e = plan.ranked.front().estimate;
  const double usd = o.usd_per_gpu_hour.value_or(cluster.gpu.usd_per_gpu_hour);
  const PriceInputs in = PriceInputsFrom(e, usd);
  const double duty = DutyCycleMultiplier(o.duty_cycle);

  std::vector<PricePoint> curve;
  for (int pct = 10; pct <= 100; pct += 10) curve.push_back(PriceAt(in, pct / 100.0));
  const PricePoint full = PriceAt(in, 1.0);
  std::optional<double> break_even;
  if (o.api_usd_per_mtok) break_even = BreakEvenUtilization(in, *o.api_usd_per_mtok);
  std::optional<DemandSizing> sizing;
  if (o.demand_tokens_per_s) {
    SW_ASSIGN_OR_RETURN(sizing, SizeForDemand(in, *o.demand_tokens_per_s));
  }

  if (o.json) {
    nlohmann::json points = nlohmann::json::array();
    for (const PricePoint& p : curve) {
      points.push_back({{"utilization", p.utilization},
                        {"usd_per_mtok_input", p.usd_per_mtok_input},
                        {"usd_per_mtok_output", p.usd_per_mtok_output}});
    }
    nlohmann::json out = {{"model", model.name},
                          {"cluster", cluster.name},
                          {"layout", e.layout.ToString()},
                          {"batch", e.workload.batch},
                          {"usd_per_gpu_hour", usd},
                          {"gpus_per_replica", in.gpus_per_replica},
                          {"replica_output_tokens_per_s", in.replica_output_tokens_per_s},
                          {"replica_input_tokens_per_s", in.replica_input_tokens_per_s},
                          {"usd_per_mtok_input", full.usd_per_mtok_input},
                          {"usd_per_mtok_output", full.usd_per_mtok_output},
                          {"duty_cycle", o.duty_cycle},
                          {"duty_cycle_multiplier", duty},
                          {"usd_per_mtok_output_at_duty_cycle", full.usd_per_mtok_output * duty},
                          {"curve", points}};
    if (break_even) out["break_even_utilization"] = *break_even;
    if (sizing) {
      out["demand"] = {{"output_tokens_per_s", sizing->demand_output_tokens_per_s},
                       {"replicas", sizing->replicas},
                       {"gpus", sizing->gpus},
                       {"utilization", sizing->utilization}};
    }
    PrintJson(out);
    return Status();
  }
  std::cout << fmt::format(
      "price: {} on {}, layout {} at batch {}, ISL {} / OSL {}, ${:.2f} per GPU-hour\n"
      "one replica ({} GPUs) at full load: {:.0f} output and {:.0f} input tokens/s "
      "({:.0f}% of its time on prefill)\n\n",
      model.name, cluster.name, e.layout.ToString(), e.workload.batch, o.isl, o.osl, usd,
      in.gpus_per_replica, in.replica_output_tokens_per_s, in.replica_input_tokens_per_s,
      100 * in.input_time_share);
  Table table({"utilization", "$/Mtok input", "$/Mtok output"});
  for (const PricePoint& p : curve) {
    table.AddRow({fmt::format("{:.0f}%", 100 * p.utilization),
                  fmt::format("{:.4f}", p.usd_per_mtok_input),
                  fmt::format("{:.4f}", p.usd_per_mtok_output)});
  }
  std::cout << table.Render();
  std::cout << fmt::format(
      "\nduty cycle {:.0f}%: every price above x{:.2f} (${:.4f} per million output tokens at "
      "full load during the busy hours)\n",
      100 * o.duty_cycle, duty, full.usd_per_mtok_output * duty);
  if (break_even) {
    std::cout << (*break_even <= 1.0
                      ? fmt::format("break-even against ${:g}/Mtok output: {:.1f}% utilisation\n",
                                    *o.api_usd_per_mtok, 100 * *break_even)
                      : fmt::format("break-even against ${:g}/Mtok output: never (needs {:.0f}% "
                                    "utilisation); the API is cheaper\n",
                                    *o.api_usd_per_mtok, 100 * *break_even));
  }
  if (sizing) {
    std::cout << fmt::format(
        "demand of {:.0f} output tokens/s: {} replicas = {} GPUs, running {:.1f}% utilised\n",
        sizing->demand_output_tokens_per_s, sizing->replicas, sizing->gpus,
        100 * sizing->utilization);
  }
  return Status();
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
  sub->add_option("--isl", opts->isl, "Prompt tokens per request")->capture_default_str();
  sub->add_option("--osl", opts->osl, "Output tokens per request")->capture_default_str();
  sub->add_option("--usd-per-gpu-hour", opts->usd_per_gpu_hour, "GPU price (default: catalog)");
  sub->add_option("--duty-cycle", opts->duty_cycle, "Fraction of the time the GPUs have work")
      ->capture_default_str();
  sub->add_option("--api-usd-per-mtok", opts->api_usd_per_mtok,
                  "An API's price per million output tokens, for break-even");
  sub->add_option("--demand-tokens-per-s", opts->demand_tokens_per_s,
                  "Sustained output tokens/s to size the deployment for");
  sub->add_flag("--json", opts->json, "Print JSON");
  BindCommand(sub, opts, result, RunPrice);
}

}  // namespace shardwise::cli
