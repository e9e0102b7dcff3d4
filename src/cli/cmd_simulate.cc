// `shardwise simulate`: a discrete-event serving simulation of a layout under traffic.
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>

#include "cluster_options.h"
#include "command.h"
#include "perf_options.h"
#include "shardwise/common/format.h"
#include "shardwise/model/catalog.h"
#include "shardwise/plan/planner.h"
#include "shardwise/report/table.h"
#include "shardwise/sim/simulator.h"
#include "validators.h"

namespace shardwise::cli {
namespace {

struct SimulateOptions {
  std::string model = "llama-3.1-8b";
  ClusterOptions cluster;
  PerfCliOptions perf;
  std::string layout;  // empty: the planner's best for the workload
  std::string rate = "10";
  double burstiness = 1.0;
  std::string trace;
  int64_t isl = 1024;
  int64_t osl = 256;
  std::string isl_dist = "fixed";
  std::string osl_dist = "fixed";
  double length_cv = 0.5;
  int64_t requests = 1000;
  double duration_s = 0;
  uint64_t seed = 1;
  std::string router = "round-robin";
  std::string admission = "no-evict";
  int64_t max_batch = 2048;
  double max_ttft_ms = 0;
  double max_tpot_ms = 0;
  bool json = false;
};

StatusOr<double> ParseRate(const std::string& text) {
  if (text == "inf" || text == "offline") return std::numeric_limits<double>::infinity();
  try {
    size_t used = 0;
    const double rate = std::stod(text, &used);
    if (used == text.size() && rate > 0 && std::isfinite(rate)) return rate;
  } catch (...) {
  }
  return Error(fmt::format("--rate '{}' must be a positive number of requests per second, or "
                           "'inf' for offline (everything at t = 0)",
                           text));
}

nlohmann::json Percentiles(const LogHistogram& h) {
  return {{"p50", h.Percentile(50)}, {"p90", h.Percentile(90)}, {"p99", h.Percentile(99)},
          {"mean", h.Mean()}};
}

Status RunSimulate(const SimulateOptions& o) {
  SW_ASSIGN_OR_RETURN(ModelSpec model, LoadModel(o.model));
  SW_ASSIGN_OR_RETURN(ClusterSpec cluster, o.cluster.Load());
  SW_ASSIGN_OR_RETURN(PerfOptions perf, o.perf.Build(model));
  SW_ASSIGN_OR_RETURN(double rate, ParseRate(o.rate));
  SW_ASSIGN_OR_RETURN(RouterPolicy router, ParseRouter(o.router));
  SW_ASSIGN_OR_RETURN(Admission admission, ParseAdmission(o.admission));
  SW_ASSIGN_OR_RETURN(LengthDistribution isl_dist, ParseLengthDistribution(o.isl_dist));
  SW_ASSIGN_OR_RETURN(LengthDistribution osl_dist, ParseLengthDistribution(o.osl_dist));
  if (!(o.burstiness > 0 && o.burstiness <= 100)) return Error("--burstiness must be in (0, 100]");
  if (o.isl < 1 || o.osl < 1 || o.isl > 10'000'000 || o.osl > 10'000'000) {
    return Error("--isl and --osl must be between 1 and 10,000,000");
  }
  if (!(o.length_cv >= 0 && o.length_cv <= 10)) return Error("--length-cv must be in [0, 10]");
  if (o.requests < 1 || o.requests > 100'000'000) return Error("--requests must be between 1 and 100,000,000");
  if (o.duration_s < 0) return Error("--duration must be positive seconds");
  if (o.max_batch < 1) return Error("--max-batch must be at least 1");

  std::vector<TraceRequest> trace;
  if (!o.trace.empty()) {
    SW_ASSIGN_OR_RETURN(trace, LoadTrace(o.trace));
  }
  // Mean lengths drive the layout choice and the step table's range.
  double mean_isl = static_cast<double>(o.isl), mean_osl = static_cast<double>(o.osl);
  int64_t longest = o.isl + o.osl;
  if (!trace.empty()) {
    mean_isl = mean_osl = 0;
    longest = 0;
    for (const TraceRequest& t : trace) {
      mean_isl += static_cast<double>(t.input_tokens) / static_cast<double>(trace.size());
      mean_osl += static_cast<double>(t.output_tokens) / static_cast<double>(trace.size());
      longest = std::max(longest, t.input_tokens + t.output_tokens);
    }
  } else if (isl_dist != LengthDistribution::kFixed || osl_dist != LengthDistribution::kFixed) {
    longest = static_cast<int64_t>(4.0 * (1 + o.length_cv) * static_cast<double>(o.isl + o.osl));
  }

  Layout layout;
  if (!o.layout.empty()) {
    SW_ASSIGN_OR_RETURN(layout, ParseLayout(o.layout));
  } else {
    PlanRequest req;
    req.perf = perf;
    req.max_batch = o.max_batch;
    req.workload.prompt_tokens = std::max<int64_t>(1, std::llround(mean_isl));
    req.workload.output_tokens = std::max<int64_t>(1, std::llround(mean_osl));
    SW_ASSIGN_OR_RETURN(PlanResult plan, Plan(model, cluster, req));
    layout = plan.ranked.front().estimate.layout;
  }
  SW_ASSIGN_OR_RETURN(StepModel step, StepModel::Create(model, cluster, layout, perf));
  Workload one;
  one.prompt_tokens = std::max<int64_t>(1, std::llround(mean_isl));
  one.output_tokens = std::max<int64_t>(1, std::llround(mean_osl));
  const StepEstimate probe = step.Estimate(one);
  if (!probe.memory.Fits()) return Error(DoesNotFitMessage(model, cluster, probe, perf));

  SimConfig config;
  config.replicas = layout.Replicas();
  config.gpus_per_replica = layout.InstanceGpus();
  config.batch.max_batch = o.max_batch;
  config.batch.max_batched_tokens = perf.max_batched_tokens;
  config.batch.admission = admission;
  config.router = router;
  config.kv_capacity_tokens = probe.memory.kv_capacity_tokens;
  config.state_tokens_per_sequence = probe.memory.state_tokens_per_sequence;
  const double inf = std::numeric_limits<double>::infinity();
  config.max_ttft_s = o.max_ttft_ms > 0 ? o.max_ttft_ms * 1e-3 : inf;
  config.max_tpot_s = o.max_tpot_ms > 0 ? o.max_tpot_ms * 1e-3 : inf;
  config.peak_flops_per_s = cluster.gpu.PeakFlopsPerS(cluster.gpu.ComputeDtypeFor(perf.weight_dtype));
  config.usd_per_gpu_hour = cluster.gpu.usd_per_gpu_hour;
  const auto wall_start = std::chrono::steady_clock::now();
  auto last_print = wall_start;
  const int64_t total = trace.empty() ? o.requests : static_cast<int64_t>(trace.size());
  bool printed = false;
  config.progress = [&](int64_t done, double sim_s) {
    const auto now = std::chrono::steady_clock::now();
    if (std::chrono::duration<double>(now - last_print).count() < 1.0) return;
    last_print = now;
    printed = true;
    std::fprintf(stderr, "\rsimulate: %lld of %lld requests done, %.0f s simulated",
                 static_cast<long long>(done), static_cast<long long>(total), sim_s);
  };

  const int64_t table_batch = std::min<int64_t>(o.max_batch, std::max<int64_t>(1, probe.memory.max_sequences * 4));
  SW_ASSIGN_OR_RETURN(StepTable steps,
                      StepTable::Build(step, table_batch, longest, perf.max_batched_tokens));
  RequestSource source =
      trace.empty()
          ? RequestSource({rate, o.burstiness}, {isl_dist, static_cast<double>(o.isl), o.length_cv},
                          {osl_dist, static_cast<double>(o.osl), o.length_cv}, o.requests, o.seed,
                          o.duration_s > 0 ? o.duration_s : inf)
          : RequestSource(trace);
  SW_ASSIGN_OR_RETURN(SimResult r, Simulate(model, steps, source, config));
  if (printed) std::fprintf(stderr, "\n");
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();

  if (o.json) {
    nlohmann::json kv = nlohmann::json::array();
    for (const auto& [t, f] : r.kv_occupancy) kv.push_back({t, f});
    PrintJson({{"model", model.name},
               {"cluster", cluster.name},
               {"layout", layout.ToString()},
               {"replicas", config.replicas},
               {"gpus", config.replicas * config.gpus_per_replica},
               {"seed", o.seed},
               {"requests", r.requests},
               {"preemptions", r.preemptions},
               {"iterations", r.steps},
               {"makespan_s", r.makespan_s},
               {"input_tokens_per_s", r.InputTokensPerS()},
               {"output_tokens_per_s", r.OutputTokensPerS()},
               {"ttft_p50_s", r.ttft_s.Percentile(50)},
               {"ttft_p90_s", r.ttft_s.Percentile(90)},
               {"ttft_p99_s", r.ttft_s.Percentile(99)},
               {"tpot_p50_s", r.tpot_s.Percentile(50)},
               {"tpot_p90_s", r.tpot_s.Percentile(90)},
               {"tpot_p99_s", r.tpot_s.Percentile(99)},
               {"itl", Percentiles(r.itl_s)},
               {"e2e", Percentiles(r.e2e_s)},
               {"goodput_fraction", r.requests > 0 ? r.goodput_requests / static_cast<double>(r.requests) : 0.0},
               {"goodput_output_tokens_per_s", r.makespan_s > 0 ? r.goodput_output_tokens / r.makespan_s : 0.0},
               {"utilization", r.utilization},
               {"mfu", r.mfu},
               {"kv_occupancy_mean", r.kv_occupancy_mean},
               {"kv_occupancy_max", r.kv_occupancy_max},
               {"kv_occupancy", kv},
               {"usd_per_mtok_output", r.usd_per_mtok_output}});
    return Status();
  }
  const std::string arrivals =
      !trace.empty() ? "trace " + o.trace
      : std::isinf(rate) ? std::string("offline (all at t = 0)")
      : fmt::format("{} {:g} req/s", o.burstiness == 1.0 ? "Poisson" : fmt::format("bursty (CV {:g})", o.burstiness), rate);
  std::cout << fmt::format(
      "simulate: {} on {} ({} GPUs), layout {} ({} replica{} of {} GPU{}), {}, ISL {} / OSL {}\n"
      "{} requests finished over {} simulated ({} iterations, {} preemptions) in {} wall\n\n",
      model.name, cluster.name, config.replicas * config.gpus_per_replica, layout.ToString(),
      config.replicas, config.replicas == 1 ? "" : "s", config.gpus_per_replica,
      config.gpus_per_replica == 1 ? "" : "s", arrivals,
      std::llround(mean_isl), std::llround(mean_osl), r.requests, FormatSeconds(r.makespan_s),
      r.steps, r.preemptions, FormatSeconds(wall_s));
  Table table({"latency", "p50", "p90", "p99", "mean"});
  auto row = [&](const char* name, const LogHistogram& h) {
    table.AddRow({name, FormatSeconds(h.Percentile(50)), FormatSeconds(h.Percentile(90)),
                  FormatSeconds(h.Percentile(99)), FormatSeconds(h.Mean())});
  };
  row("TTFT", r.ttft_s);
  row("TPOT", r.tpot_s);
  row("ITL", r.itl_s);
  row("end-to-end", r.e2e_s);
  std::cout << table.Render();
  std::cout << fmt::format(
      "\nthroughput   {:.0f} input and {:.0f} output tokens/s\n"
      "goodput      {:.1f}% of requests meet the SLOs ({:.0f} output tokens/s)\n"
      "utilization  {:.1f}% busy, MFU {:.1f}%, KV cache {:.1f}% full on average ({:.1f}% at most)\n"
      "cost         ${:.3f} per million output tokens at ${:.2f} per GPU-hour\n",
      r.InputTokensPerS(), r.OutputTokensPerS(),
      r.requests > 0 ? 100.0 * r.goodput_requests / static_cast<double>(r.requests) : 0.0,
      r.makespan_s > 0 ? r.goodput_output_tokens / r.makespan_s : 0.0, 100 * r.utilization,
      100 * r.mfu, 100 * r.kv_occupancy_mean, 100 * r.kv_occupancy_max, r.usd_per_mtok_output,
      cluster.gpu.usd_per_gpu_hour);
  return Status();
}

}  // namespace

void AddSimulateCommand(CLI::App& app, Status& result) {
  auto opts = std::make_shared<SimulateOptions>();
  CLI::App* sub = app.add_subcommand(
      "simulate",
      "Discrete-event serving simulation: arrivals, continuous batching with chunked prefill,\n"
      "KV admission and preemption, DP replicas behind a router; latency percentiles,\n"
      "goodput, utilisation, MFU and cost. Deterministic for a --seed. Example:\n"
      "  shardwise simulate --model llama-3.1-70b --cluster dgx-h100 --layout tp4 --rate 8");
  sub->add_option("--model", opts->model, "Catalog model or config.json")->capture_default_str();
  opts->cluster.AddTo(sub);
  opts->perf.AddTo(sub);
  sub->add_option("--layout", opts->layout, "Parallel layout (default: the planner's best)");
  sub->add_option("--rate", opts->rate, "Requests per second, or 'inf' for offline")
      ->capture_default_str();
  sub->add_option("--burstiness", opts->burstiness,
                  "CV of inter-arrival gaps (1 = Poisson, > 1 bursty gamma arrivals)")
      ->capture_default_str();
  sub->add_option("--trace", opts->trace, "CSV of arrival_s,input_tokens,output_tokens");
  sub->add_option("--isl", opts->isl, "Mean prompt tokens")->capture_default_str();
  sub->add_option("--osl", opts->osl, "Mean output tokens")->capture_default_str();
  sub->add_option("--isl-dist", opts->isl_dist, "fixed, uniform or lognormal")->capture_default_str();
  sub->add_option("--osl-dist", opts->osl_dist, "fixed, uniform or lognormal")->capture_default_str();
  sub->add_option("--length-cv", opts->length_cv, "CV of the non-fixed length distributions")
      ->capture_default_str();
  sub->add_option("--requests", opts->requests, "Requests to simulate")->capture_default_str();
  sub->add_option("--duration", opts->duration_s, "Stop arrivals after this many seconds")
      ->check(kPositiveFinite);
  sub->add_option("--seed", opts->seed, "Random seed")
      ->check(kUnsignedInteger)
      ->capture_default_str();
  sub->add_option("--router", opts->router, "round-robin or least-loaded")->capture_default_str();
  sub->add_option("--admission", opts->admission,
                  "no-evict (reserve prompt + output KV, TensorRT-LLM's default) or "
                  "max-utilization (reserve the prompt, preempt when full, as vLLM)")
      ->capture_default_str();
  sub->add_option("--max-batch", opts->max_batch, "Sequences running at once per replica")
      ->capture_default_str();
  sub->add_option("--max-ttft-ms", opts->max_ttft_ms, "Goodput SLO: time to first token")
      ->check(kPositiveFinite);
  sub->add_option("--max-tpot-ms", opts->max_tpot_ms, "Goodput SLO: time per output token")
      ->check(kPositiveFinite);
  sub->add_flag("--json", opts->json, "Print JSON");
  BindCommand(sub, opts, result, RunSimulate);
}

}  // namespace shardwise::cli
