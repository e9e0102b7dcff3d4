// `shardwise plan`: every valid layout of a cluster, ranked by an objective under SLOs.
#include <fmt/format.h>

#include <chrono>
#include <limits>

#include "cluster_options.h"
#include "command.h"
#include "perf_options.h"
#include "shardwise/common/format.h"
#include "shardwise/model/catalog.h"
#include "shardwise/plan/planner.h"
#include "shardwise/report/table.h"
#include "validators.h"

namespace shardwise::cli {
namespace {

struct PlanOptions {
  std::string model = "llama-3.1-70b";
  ClusterOptions cluster;
  PerfCliOptions perf;
  int64_t isl = 1024;
  int64_t osl = 256;
  std::string objective = "throughput";
  double max_ttft_ms = 0;  // 0: no SLO
  double max_tpot_ms = 0;
  int64_t max_batch = 2048;
  int top = 5;
  std::string layout;  // evaluate only this layout
  bool json = false;
};

nlohmann::json EntryJson(const PlanEntry& p) {
  const StepEstimate& e = p.estimate;
  return {{"layout", e.layout.ToString()},
          {"gpus", e.layout.gpus()},
          {"dp", e.layout.dp},
          {"tp", e.layout.tp},
          {"pp", e.layout.pp},
          {"ep", e.layout.ep},
          {"cp", e.layout.cp},
          {"replicas", e.layout.Replicas()},
          {"batch", e.workload.batch},
          {"isl", e.workload.prompt_tokens},
          {"osl", e.workload.output_tokens},
          {"ttft_s", e.ttft_s},
          {"tpot_s", e.tpot_s},
          {"output_tokens_per_s", e.output_tokens_per_s},
          {"output_tokens_per_s_per_gpu", e.output_tokens_per_s_per_gpu},
          {"output_tokens_per_s_per_user", e.output_tokens_per_s_per_user},
          {"usd_per_mtok_output", p.usd_per_mtok_output},
          {"memory_per_gpu_bytes", e.memory.UsedBytes()},
          {"max_sequences", e.memory.max_sequences},
          {"bound", e.bound},
          {"limited_by", p.limited_by},
          {"over_parallelised", e.over_parallelised},
          {"why", p.why}};
}

Status RunPlan(const PlanOptions& o) {
  SW_ASSIGN_OR_RETURN(ModelSpec model, LoadModel(o.model));
  SW_ASSIGN_OR_RETURN(ClusterSpec cluster, o.cluster.Load());
  PlanRequest req;
  SW_ASSIGN_OR_RETURN(req.perf, o.perf.Build(model));
  SW_ASSIGN_OR_RETURN(req.objective, ParseObjective(o.objective));
  if (o.isl < 1 || o.isl > 10'000'000) return Error("--isl must be between 1 and 10,000,000");
  if (o.osl < 1 || o.osl > 10'000'000) return Error("--osl must be between 1 and 10,000,000");
  if (o.max_ttft_ms < 0 || o.max_tpot_ms < 0) return Error("SLOs must be positive milliseconds");
  if (o.top < 1 || o.top > 1000) return Error("--top must be between 1 and 1000");
  req.workload.prompt_tokens = o.isl;
  req.workload.output_tokens = o.osl;
  const double inf = std::numeric_limits<double>::infinity();
  req.max_ttft_s = o.max_ttft_ms > 0 ? o.max_ttft_ms * 1e-3 : inf;
  req.max_tpot_s = o.max_tpot_ms > 0 ? o.max_tpot_ms * 1e-3 : inf;
  req.max_batch = o.max_batch;
  req.top = o.top;
  if (!o.layout.empty()) {
    SW_ASSIGN_OR_RETURN(Layout only, ParseLayout(o.layout));
    req.only_layout = only;
  }
  const auto start = std::chrono::steady_clock::now();
  SW_ASSIGN_OR_RETURN(PlanResult r, Plan(model, cluster, req));
  const double elapsed_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  if (o.json) {
    nlohmann::json layouts = nlohmann::json::array();
    for (const PlanEntry& p : r.ranked) layouts.push_back(EntryJson(p));
    nlohmann::json pareto = nlohmann::json::array();
    for (const PlanEntry& p : r.pareto) pareto.push_back(EntryJson(p));
    PrintJson({{"model", model.name},
               {"cluster", cluster.name},
               {"gpus", cluster.num_gpus},
               {"gpu", cluster.gpu.name},
               {"objective", ObjectiveName(req.objective)},
               {"dtype", DtypeName(req.perf.weight_dtype)},
               {"weight_formats", WeightFormatName(req.perf)},
               {"kv_dtype", DtypeName(req.perf.kv_dtype)},
               {"layouts_considered", r.layouts_considered},
               {"layouts_fitting", r.layouts_fitting},
               {"points_evaluated", r.points_evaluated},
               {"elapsed_s", elapsed_s},
               {"layouts", layouts},
               {"pareto", pareto}});
    return Status();
  }
  std::cout << fmt::format(
      "plan: {} on {} ({} x {}), ISL {} / OSL {}, objective {}, {} weights, {} KV\n"
      "{} layouts considered, {} fit in memory, {} (layout, batch) points in {}\n\n",
      model.name, cluster.name, cluster.num_gpus, cluster.gpu.name, o.isl, o.osl, o.objective,
      WeightFormatName(req.perf), DtypeName(req.perf.kv_dtype), r.layouts_considered,
      r.layouts_fitting, r.points_evaluated, FormatSeconds(elapsed_s));
  Table table({"#", "layout", "batch", "TTFT", "TPOT", "tok/s/user", "tok/s", "tok/s/GPU",
               "$/Mtok out", "mem/GPU", "bound"});
  table.SetLeftAligned({1, 10});
  for (size_t i = 0; i < r.ranked.size(); ++i) {
    const StepEstimate& e = r.ranked[i].estimate;
    table.AddRow({std::to_string(i + 1), e.layout.ToString(), std::to_string(e.workload.batch),
                  FormatSeconds(e.ttft_s), FormatSeconds(e.tpot_s),
                  fmt::format("{:.1f}", e.output_tokens_per_s_per_user),
                  fmt::format("{:.0f}", e.output_tokens_per_s),
                  fmt::format("{:.1f}", e.output_tokens_per_s_per_gpu),
                  fmt::format("{:.3f}", r.ranked[i].usd_per_mtok_output),
                  FormatBytes(e.memory.UsedBytes()), e.bound});
  }
  std::cout << table.Render() << "\nwhy:\n";
  for (size_t i = 0; i < r.ranked.size(); ++i) {
    std::cout << fmt::format("  {}. {}\n", i + 1, r.ranked[i].why);
  }
  std::cout << "\nPareto front (no point is both faster per user and more productive per GPU):\n";
  Table pareto({"layout", "batch", "tok/s/user", "tok/s/GPU", "TPOT"});
  pareto.SetLeftAligned({0});
  for (const PlanEntry& p : r.pareto) {
    const StepEstimate& e = p.estimate;
    pareto.AddRow({e.layout.ToString(), std::to_string(e.workload.batch),
                   fmt::format("{:.1f}", e.output_tokens_per_s_per_user),
                   fmt::format("{:.1f}", e.output_tokens_per_s_per_gpu), FormatSeconds(e.tpot_s)});
  }
  std::cout << pareto.Render();
  return Status();
}

}  // namespace

void AddPlanCommand(CLI::App& app, Status& result) {
  auto opts = std::make_shared<PlanOptions>();
  CLI::App* sub = app.add_subcommand(
      "plan",
      "Rank every valid TP/PP/EP/DP/CP layout of a cluster for a workload: drop what does not\n"
      "fit, respect the SLOs, show the Pareto front and why the winners win. Example:\n"
      "  shardwise plan --model llama-3.1-70b --cluster dgx-h100 --nodes 2 --objective latency");
  sub->add_option("--model", opts->model, "Catalog model or config.json")->capture_default_str();
  opts->cluster.AddTo(sub);
  opts->perf.AddTo(sub);
  sub->add_option("--isl", opts->isl, "Input (prompt) tokens per request")->capture_default_str();
  sub->add_option("--osl", opts->osl, "Output tokens per request")->capture_default_str();
  sub->add_option("--objective", opts->objective, "latency, throughput or cost")
      ->capture_default_str();
  sub->add_option("--max-ttft-ms", opts->max_ttft_ms, "SLO: time to first token")
      ->check(kPositiveFinite);
  sub->add_option("--max-tpot-ms", opts->max_tpot_ms, "SLO: time per output token")
      ->check(kPositiveFinite);
  sub->add_option("--max-batch", opts->max_batch,
                  "Engine cap on concurrent sequences per replica (TensorRT-LLM's default "
                  "max_batch_size)")
      ->capture_default_str();
  sub->add_option("--top", opts->top, "Layouts to show")->capture_default_str();
  sub->add_option("--layout", opts->layout, "Evaluate only this layout (choosing its batch)");
  sub->add_flag("--json", opts->json, "Print JSON");
  BindCommand(sub, opts, result, RunPlan);
}

}  // namespace shardwise::cli
