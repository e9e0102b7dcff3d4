// `shardwise plan`: every valid layout of a cluster, ranked by an objective under SLOs.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>

#include "client_phase.h"
#include "cluster_options.h"
#include "command.h"
#include "emit_options.h"
#include "html_output.h"
#include "measured_spread.h"
#include "metric_json.h"
#include "perf_options.h"
#include "plan_disagg.h"
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
  CLI::Option* max_batch_option = nullptr;
  int64_t concurrency = 0;
  CLI::Option* concurrency_option = nullptr;
  double rate = 0;
  CLI::Option* rate_option = nullptr;
  int top = 5;
  std::string layout;  // evaluate only this layout
  std::string disagg = "auto";
  bool json = false;
  HtmlOptions html;
  EmitOptions emit;
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
          {"unloaded_ttft_s", e.ttft_s},
          {"decode_tpot_s", e.tpot_s},
          {"output_tokens_per_s", e.output_tokens_per_s},
          {"output_tokens_per_s_per_gpu", e.output_tokens_per_s_per_gpu},
          {"output_tokens_per_s_per_user", e.output_tokens_per_s_per_user},
          {"usd_per_mtok_output", p.usd_per_mtok_output},
          {"memory_per_gpu_bytes", e.memory.UsedBytes()},
          {"max_sequences", e.memory.max_sequences},
          {"bound", e.bound},
          {"limited_by", p.limited_by},
          {"over_parallelised", e.over_parallelised},
          {"why", p.why},
          {"prefill", PhaseJson(e.prefill)},
          {"decode", PhaseJson(e.decode)},
          {"ep_exchange", e.layout.ep > 1 ? EpSettingJson(p.ep) : nlohmann::json(nullptr)},
          {"pipeline", PipelineJson(e)}};
}

// An entry simulated at the load: TTFT and TPOT there (mean, p50, p99, and the band of the mean:
// low, high) beside the unloaded prefill and the pure decode step (unloaded_ttft_s,
// decode_tpot_s), and the throughput there. A closed loop's bands also cover where measured
// closed loops fell (measured_spread.h).
nlohmann::json RankedJson(const PlanEntry& p, const GpuSpec& gpu, const EngineProfile& engine,
                          bool closed_loop) {
  nlohmann::json j = EntryJson(p);
  if (!p.at_load) return j;
  const OperatingPoint& a = *p.at_load;
  const LoadBands bands = BandsAtLoad(PhaseBand(p.estimate.prefill, gpu, engine),
                                      PhaseBand(p.estimate.decode, gpu, engine), a.out_of_phase,
                                      engine, gpu.name, closed_loop);
  j["concurrency"] = a.concurrency;
  j["requests_per_s"] = a.requests_per_s;
  j["ttft_s"] = WithBand(LatencyJson(a.ttft), bands.ttft);
  j["tpot_s"] = WithBand(LatencyJson(a.tpot), bands.tpot);
  j["client_phase"] = ClientPhaseJson(a.ttft.mean_s, a.tpot.mean_s, a.out_of_phase);
  j["assumed_inputs"] = bands.assumed_inputs;
  j["output_tokens_per_s"] = a.output_tokens_per_s;
  j["output_tokens_per_s_per_gpu"] = a.output_tokens_per_s_per_gpu;
  j["output_tokens_per_s_per_user"] = a.output_tokens_per_s_per_user;
  j["requests_simulated_per_replica"] = a.requests_simulated;
  return j;
}

Status RunPlan(const PlanOptions& o) {
  SW_ASSIGN_OR_RETURN(ModelSpec model, LoadModel(o.model));
  SW_ASSIGN_OR_RETURN(ClusterSpec cluster, o.cluster.Load());
  PlanRequest req;
  SW_ASSIGN_OR_RETURN(req.perf, o.perf.Build(model));
  req.search_ep = !o.perf.UserChoseEpExchange();
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
  // Sequences per replica: the engine's max_num_seqs unless given, as simulate does.
  req.max_batch = o.max_batch_option && *o.max_batch_option
                      ? o.max_batch
                      : static_cast<int64_t>(req.perf.engine.max_num_seqs);
  const bool by_concurrency = o.concurrency_option && *o.concurrency_option;
  const bool by_rate = o.rate_option && *o.rate_option;
  if (by_concurrency && by_rate) {
    return Error("--concurrency and --rate exclude each other: pick a closed or an open loop");
  }
  if (by_concurrency) {
    if (o.concurrency < 1 || o.concurrency > 10'000'000) {
      return Error(fmt::format("--concurrency must be between 1 and 10,000,000 clients, got {}",
                               o.concurrency));
    }
    req.load = {PlanLoad::Kind::kConcurrency, static_cast<double>(o.concurrency)};
  }
  if (by_rate) {
    if (!(o.rate > 0 && o.rate <= 1e7)) {
      return Error(fmt::format(
          "--rate must be a positive number of requests per second (at most 1e7), got {:g}",
          o.rate));
    }
    req.load = {PlanLoad::Kind::kRate, o.rate};
  }
  req.top = o.top;
  if (!o.layout.empty()) {
    SW_ASSIGN_OR_RETURN(Layout only, ParseLayout(o.layout));
    SW_RETURN_IF_ERROR(CheckRedundantExperts(only, req.perf));
    req.only_layout = only;
  }
  SW_RETURN_IF_ERROR(o.emit.Validate(o.html.force));
  SW_RETURN_IF_ERROR(o.html.Check());
  const auto start = std::chrono::steady_clock::now();
  SW_ASSIGN_OR_RETURN(PlanResult r, Plan(model, cluster, req));
  std::optional<DisaggPlanEntry> disagg;
  const bool searched = o.disagg == "auto" && !req.only_layout;
  if (searched) {
    SW_ASSIGN_OR_RETURN(disagg, PlanDisaggregated(model, cluster, req));
  }
  const DeploymentVerdict verdict = CompareDeployments(r.ranked.front(), disagg, req.objective);
  const double elapsed_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  PrintFormatNotes(cluster.gpu, req.perf);
  std::string unfit;  // layouts whose loop out of phase did not fit their KV cache
  for (const PlanEntry& p : r.ranked) {
    if (p.at_load && p.at_load->out_of_phase_failed) {
      unfit += (unfit.empty() ? "" : ", ") + p.estimate.layout.ToString();
    }
  }
  if (!unfit.empty()) {
    std::fprintf(stderr,
                 "shardwise: note: the clients out of phase need longer requests than the KV "
                 "cache of %s holds; those bands cover the lockstep loop only\n",
                 unfit.c_str());
  }
  if (req.objective == Objective::kCost) {
    // Every layout uses all the cluster's GPUs at one price: $ per token = $/GPU-hour / 3600 /
    // tokens/s per GPU, so cost and throughput rank alike; a load makes them differ.
    std::fprintf(stderr,
                 "shardwise: note: every layout here pays for the same %lld GPUs, so cost per "
                 "token ranks them as throughput per GPU does; for the cheapest deployment of a "
                 "load use 'shardwise recommend --rate R --max-ttft-ms T --max-tpot-ms P "
                 "--objective cost'\n",
                 static_cast<long long>(cluster.num_gpus));
  }

  nlohmann::json out;
  {
    nlohmann::json layouts = nlohmann::json::array();
    for (const PlanEntry& p : r.ranked) {
      layouts.push_back(RankedJson(p, cluster.gpu, req.perf.engine, by_concurrency));
    }
    nlohmann::json pareto = nlohmann::json::array();
    for (const PlanEntry& p : r.pareto) pareto.push_back(EntryJson(p));
    auto slo = [](double limit_s) {
      return std::isfinite(limit_s) ? nlohmann::json(limit_s) : nlohmann::json(nullptr);
    };
    out = {
        {"command", "plan"},
        {"model", model.name},
        {"cluster", cluster.name},
        {"isl", o.isl},
        {"osl", o.osl},
        {"slo", {{"max_ttft_s", slo(req.max_ttft_s)}, {"max_tpot_s", slo(req.max_tpot_s)}}},
        {"roofline", RooflineJson(model, cluster, req.perf)},
        {"cluster_tree", ClusterTreeJson(cluster)},
        {"gpus", cluster.num_gpus},
        {"gpu", cluster.gpu.name},
        {"objective", ObjectiveName(req.objective)},
        {"engine", req.perf.engine.name},
        {"load", by_concurrency ? "concurrency"
                 : by_rate      ? "rate"
                                : "offline"},
        {"dtype", DtypeName(req.perf.weight_dtype)},
        {"weight_formats", WeightFormatName(req.perf)},
        {"kv_dtype", DtypeName(req.perf.kv_dtype)},
        {"redundant_experts", req.perf.redundant_experts},
        {"speculative", SpeculativeJson(req.perf.speculative)},
        {"prefix_hit_rate", req.perf.prefix_hit_rate},
        {"expert_skew",
         req.perf.expert_skew ? nlohmann::json(*req.perf.expert_skew) : nlohmann::json(nullptr)},
        {"layouts_considered", r.layouts_considered},
        {"layouts_fitting", r.layouts_fitting},
        {"points_evaluated", r.points_evaluated},
        {"elapsed_s", elapsed_s},
        {"layouts", layouts},
        {"measured_spread", by_concurrency ? MeasuredSpreadJson(req.perf.engine, cluster.gpu.name)
                                           : nlohmann::json(nullptr)},
        {"pareto", pareto},
        {"disaggregated", disagg ? DisaggEntryJson(*disagg) : nlohmann::json(nullptr)},
        {"deployment",
         {{"winner", verdict.disaggregated_wins ? "disaggregated" : "aggregated"},
          {"why", verdict.why}}}};
  }
  EmitOptions emit = o.emit;
  emit.force = o.html.force;
  std::optional<EmitTarget> emitted;
  if (!o.emit.engine.empty()) {
    SW_ASSIGN_OR_RETURN(emitted,
                        emit.Choose(r.ranked, disagg, verdict.disaggregated_wins, searched));
  }
  if (o.json) {
    if (emitted) {
      SW_ASSIGN_OR_RETURN(out["launch"],
                          emit.Emit(model, o.model, cluster, req.perf, *emitted, false));
    }
    PrintJson(out);
    return o.html.Write(out);
  }
  std::cout << fmt::format(
      "plan: {} on {} ({} x {}), ISL {} / OSL {}, objective {}, {} weights, {} KV\n"
      "{} layouts considered, {} fit in memory, {} (layout, batch) points in {}\n\n",
      model.name, cluster.name, cluster.num_gpus, cluster.gpu.name, o.isl, o.osl, o.objective,
      WeightFormatName(req.perf), DtypeName(req.perf.kv_dtype), r.layouts_considered,
      r.layouts_fitting, r.points_evaluated, FormatSeconds(elapsed_s));
  std::cout << (by_concurrency ? fmt::format("load: closed loop of {} clients", o.concurrency)
                : by_rate      ? fmt::format("load: Poisson arrivals at {:g} requests/s", o.rate)
                               : std::string("load: offline, each layout at its best batch"))
            << "; TTFT and TPOT are means simulated at that load (p99 beside them; their "
               "bands in --json)\n";
  Table table({"#", "layout", "batch", "in flight", "TTFT", "TTFT p99", "TPOT", "TPOT p99",
               "tok/s/user", "tok/s", "tok/s/GPU", "$/Mtok out", "mem/GPU", "bound"});
  table.SetLeftAligned({1, 13});
  for (size_t i = 0; i < r.ranked.size(); ++i) {
    const StepEstimate& e = r.ranked[i].estimate;
    const OperatingPoint& a = *r.ranked[i].at_load;
    table.AddRow({std::to_string(i + 1), e.layout.ToString(), std::to_string(e.workload.batch),
                  fmt::format("{:.0f}", a.concurrency), FormatSeconds(a.ttft.mean_s),
                  FormatSeconds(a.ttft.p99_s), FormatSeconds(a.tpot.mean_s),
                  FormatSeconds(a.tpot.p99_s),
                  fmt::format("{:.1f}", a.output_tokens_per_s_per_user),
                  fmt::format("{:.0f}", a.output_tokens_per_s),
                  fmt::format("{:.1f}", a.output_tokens_per_s_per_gpu),
                  fmt::format("{:.3f}", r.ranked[i].usd_per_mtok_output),
                  FormatBytes(e.memory.UsedBytes()), e.bound});
  }
  std::cout << table.Render();
  if (std::any_of(r.ranked.begin(), r.ranked.end(),
                  [](const PlanEntry& p) { return p.at_load && p.at_load->out_of_phase; })) {
    std::cout << "\nlockstep     fixed lengths keep the clients in step (the means above); each "
                 "layout's loop out of phase\n             is in --json (client_phase), and the "
                 "bands cover both\n";
  }
  if (by_concurrency) {
    std::cout << "\n"
              << MeasuredSpreadLine(req.perf.engine, cluster.gpu.name,
                                    "the bands in --json cover that");
  }
  std::cout << "\nwhy:\n";
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
  if (searched) {
    std::cout << "\naggregated or disaggregated:\n";
    if (disagg) std::cout << "  best split: " << disagg->why << "\n";
    std::cout << "  " << verdict.why << "\n";
  }
  if (emitted) {
    SW_RETURN_IF_ERROR(emit.Emit(model, o.model, cluster, req.perf, *emitted, true).status());
  }
  return o.html.Write(out);
}

}  // namespace

void AddPlanCommand(CLI::App& app, Status& result) {
  auto opts = std::make_shared<PlanOptions>();
  CLI::App* sub = app.add_subcommand(
      "plan",
      "Rank every valid TP/PP/EP/DP/CP layout of a cluster for a workload: drop what does not\n"
      "fit, respect the SLOs, show the Pareto front and why the winners win. Example:\n"
      "  shardwise plan --model llama-3.1-70b --cluster dgx-h100 --nodes 2 --objective latency\n"
      "From answer to deployment, a page with plots and a launch command:\n"
      "  shardwise plan --model llama-3.1-70b --html report.html --emit vllm");
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
  opts->max_batch_option = sub->add_option(
      "--max-batch", opts->max_batch,
      "Cap on concurrent sequences per attention rank: per replica, or per DP attention rank "
      "of an attention-DP layout (default: the engine's max_num_seqs)");
  opts->concurrency_option =
      sub->add_option("--concurrency", opts->concurrency,
                      "Rank layouts by what they do for N closed-loop clients (as vllm bench serve "
                      "--max-concurrency); TTFT/TPOT SLOs are checked there");
  opts->rate_option = sub->add_option(
      "--rate", opts->rate,
      "Rank layouts by what they do at R requests/s (Poisson); excludes --concurrency");
  sub->add_option("--top", opts->top, "Layouts to show")->capture_default_str();
  sub->add_option("--layout", opts->layout, "Evaluate only this layout (choosing its batch)");
  sub->add_option("--disagg", opts->disagg,
                  "auto: also search prefill/decode disaggregated deployments (xPyD) and say "
                  "which wins; off: aggregated layouts only")
      ->check(CLI::IsMember({"auto", "off"}))
      ->capture_default_str();
  sub->add_flag("--json", opts->json, "Print JSON");
  opts->html.AddTo(sub);
  opts->emit.AddTo(sub);
  BindCommand(sub, opts, result, RunPlan);
}

}  // namespace shardwise::cli
