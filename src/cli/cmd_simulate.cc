// `shardwise simulate`: a discrete-event serving simulation of a layout under traffic.
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>

#include "client_phase.h"
#include "cluster_options.h"
#include "command.h"
#include "disagg_options.h"
#include "html_output.h"
#include "measured_spread.h"
#include "metric_json.h"
#include "perf_options.h"
#include "shardwise/common/format.h"
#include "shardwise/layout/layout.h"
#include "shardwise/model/catalog.h"
#include "shardwise/plan/load.h"
#include "shardwise/plan/planner.h"
#include "shardwise/report/table.h"
#include "shardwise/sim/serving.h"
#include "shardwise/sim/simulator.h"
#include "sim_setup.h"
#include "validators.h"

namespace shardwise::cli {
namespace {

struct SimulateOptions {
  std::string model = "llama-3.1-8b";
  ClusterOptions cluster;
  PerfCliOptions perf;
  std::string layout;  // empty: the planner's best for the workload
  DisaggCliOptions disagg;
  std::string rate = "10";
  int64_t concurrency = 0;
  CLI::Option* concurrency_option = nullptr;
  CLI::Option* admission_option = nullptr;
  CLI::Option* max_batch_option = nullptr;
  double burstiness = 1.0;
  std::string trace;
  int64_t isl = 1024;
  int64_t osl = 256;
  std::string isl_dist = "fixed";
  std::string osl_dist = "fixed";
  double length_cv = 0.5;
  int64_t requests = 1000;
  CLI::Option* requests_option = nullptr;
  CLI::Option* rate_option = nullptr;
  CLI::Option* burstiness_option = nullptr;
  CLI::Option* length_cv_option = nullptr;
  double duration_s = 0;
  uint64_t seed = 1;
  std::string router = "round-robin";
  CLI::Option* router_option = nullptr;
  std::string admission = "no-evict";
  int64_t max_batch = 2048;
  double max_ttft_ms = 0;
  double max_tpot_ms = 0;
  bool json = false;
  HtmlOptions html;
};

StatusOr<double> ParseRate(const std::string& text) {
  if (text == "inf" || text == "offline") return std::numeric_limits<double>::infinity();
  try {
    size_t used = 0;
    const double rate = std::stod(text, &used);
    if (used == text.size() && rate > 0 && std::isfinite(rate)) return rate;
  } catch (...) {
  }
  return Error(
      fmt::format("--rate '{}' must be a positive number of requests per second, or "
                  "'inf' for offline (everything at t = 0)",
                  text));
}

// The request lengths of a generated workload, as asked for.
nlohmann::json LengthsJson(const SimulateOptions& o, bool fixed) {
  return {{"input_tokens_mean", o.isl},
          {"output_tokens_mean", o.osl},
          {"input_distribution", o.isl_dist},
          {"output_distribution", o.osl_dist},
          {"length_cv", fixed ? nlohmann::json(nullptr) : nlohmann::json(o.length_cv)}};
}

// What a closed loop's numbers depend on beyond the step times (docs/commands/simulate.md).
void PrintClosedLoopNotes(const SimulateOptions& o, const SimConfig& config,
                          const std::optional<OutOfPhase>& phase) {
  const int64_t slots = config.batch.max_batch * config.attention_dp * config.replicas;
  if (!config.decode_pool && o.concurrency > slots) {
    std::cout << fmt::format(
        "queue        {} clients for at most {} batch slots (--max-batch per attention rank; the "
        "KV cache may hold fewer): the other {} wait, and their wait is in the TTFT\n",
        o.concurrency, slots, o.concurrency - slots);
  }
  if (phase) {
    std::cout << fmt::format(
        "lockstep     fixed output lengths keep the clients in step, prefilled in waves, as\n"
        "             SGLang's measured loops run; out of phase, as vLLM's and TensorRT-LLM's "
        "drift\n"
        "             (--osl-dist uniform --length-cv {:g}): TTFT {}, TPOT {}; the band covers "
        "both\n",
        kOutOfPhaseOutputCv, FormatSeconds(phase->ttft_s), FormatSeconds(phase->tpot_s));
  }
}

// A layout names its own GPUs (dp x pp x tp x cp); on a larger cluster the rest stay idle. The
// copies that would use them all are suggested where that is a plain data-parallel layout.
void PrintIdleGpus(const std::string& layout_text, int64_t gpus, int64_t cluster_gpus) {
  std::string more;
  const StatusOr<Layout> layout = ParseLayout(layout_text);
  if (layout.ok() && cluster_gpus % gpus == 0 && layout->ep == 1) {
    Layout wider = *layout;
    wider.dp *= cluster_gpus / gpus;
    if (ParseLayout(wider.ToString()).ok()) {
      more = fmt::format("; --layout {} would use them all", wider.ToString());
    }
  }
  std::cout << fmt::format("gpus         layout {} uses {} of the cluster's {} GPUs{}\n",
                           layout.ok() ? layout->ToString() : layout_text, gpus, cluster_gpus,
                           more);
}

Status RunSimulate(const SimulateOptions& o) {
  SW_ASSIGN_OR_RETURN(ModelSpec model, LoadModel(o.model));
  SW_ASSIGN_OR_RETURN(ClusterSpec cluster, o.cluster.Load());
  SW_ASSIGN_OR_RETURN(PerfOptions perf, o.perf.Build(model));
  SW_ASSIGN_OR_RETURN(double rate, ParseRate(o.rate));
  SW_RETURN_IF_ERROR(o.html.Check());
  SW_ASSIGN_OR_RETURN(RouterPolicy router, ParseRouter(o.router));
  SW_ASSIGN_OR_RETURN(Admission admission, ParseAdmission(o.admission));
  const bool closed_loop = o.concurrency_option && *o.concurrency_option;
  if (closed_loop && (o.concurrency < 1 || o.concurrency > 10'000'000)) {
    return Error(fmt::format("--concurrency must be between 1 and 10,000,000 clients, got {}",
                             o.concurrency));
  }
  if (closed_loop && !o.trace.empty()) {
    return Error("--concurrency and --trace exclude each other: a trace fixes the arrival times");
  }
  if (!(o.admission_option && *o.admission_option)) {
    admission = perf.engine.no_evict_admission ? Admission::kNoEvict : Admission::kMaxUtilization;
  }
  const int64_t max_batch = o.max_batch_option && *o.max_batch_option
                                ? o.max_batch
                                : static_cast<int64_t>(perf.engine.max_num_seqs);
  SW_ASSIGN_OR_RETURN(LengthDistribution isl_dist, ParseLengthDistribution(o.isl_dist));
  SW_ASSIGN_OR_RETURN(LengthDistribution osl_dist, ParseLengthDistribution(o.osl_dist));
  if (!(o.burstiness > 0 && o.burstiness <= 100)) return Error("--burstiness must be in (0, 100]");
  if (o.isl < 1 || o.osl < 1 || o.isl > 10'000'000 || o.osl > 10'000'000) {
    return Error("--isl and --osl must be between 1 and 10,000,000");
  }
  if (!(o.length_cv >= 0 && o.length_cv <= 10)) return Error("--length-cv must be in [0, 10]");
  if (o.requests < 1 || o.requests > 100'000'000)
    return Error("--requests must be between 1 and 100,000,000");
  if (o.duration_s < 0) return Error("--duration must be positive seconds");
  if (o.max_batch < 1) return Error("--max-batch must be at least 1");
  if (closed_loop && o.rate_option && *o.rate_option) {
    return Error("--concurrency and --rate exclude each other: pick a closed or an open loop");
  }
  if (closed_loop && o.burstiness_option && *o.burstiness_option) {
    return Error(
        "--burstiness shapes open-loop arrivals, which a closed loop (--concurrency) has "
        "none of: drop one of them");
  }
  const bool fixed_lengths =
      isl_dist == LengthDistribution::kFixed && osl_dist == LengthDistribution::kFixed;
  if (fixed_lengths && o.length_cv_option && *o.length_cv_option) {
    return Error(
        "--length-cv spreads uniform or lognormal lengths: add --osl-dist (or --isl-dist) "
        "uniform|lognormal, or drop it");
  }

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
  } else if (!fixed_lengths) {
    longest = static_cast<int64_t>(4.0 * (1 + o.length_cv) * static_cast<double>(o.isl + o.osl));
  }

  Workload one;
  one.prompt_tokens = std::max<int64_t>(1, std::llround(mean_isl));
  one.output_tokens = std::max<int64_t>(1, std::llround(mean_osl));
  OfferedLoad offered;
  if (closed_loop) offered.max_in_flight = static_cast<double>(o.concurrency);
  if (!closed_loop && std::isfinite(rate)) offered.rate_per_s = rate;
  SimSetup setup;
  if (o.disagg.Given()) {
    SW_ASSIGN_OR_RETURN(DisaggSetup d, BuildDisaggSetup(o.disagg, cluster, !o.layout.empty()));
    SW_ASSIGN_OR_RETURN(
        setup, DisaggregatedSetup(model, d, perf, one, longest, max_batch, admission, offered));
  } else {
    SW_ASSIGN_OR_RETURN(
        setup, AggregatedSetup(model, cluster, o.layout, perf, one, longest, max_batch, admission));
  }
  SimConfig& config = setup.config;
  config.concurrency = closed_loop ? o.concurrency : 0;
  // A closed loop keeps the replicas balanced by load, as the engines' data-parallel routers do
  // (vLLM's DP load balancing, SGLang's shortest-queue router): a finished request's client
  // sends its next one to the replica with the fewest in flight.
  config.router = closed_loop && !(o.router_option && *o.router_option)
                      ? RouterPolicy{LeastLoadedRouter{}}
                      : router;
  const double inf = std::numeric_limits<double>::infinity();
  config.max_ttft_s = o.max_ttft_ms > 0 ? o.max_ttft_ms * 1e-3 : inf;
  config.max_tpot_s = o.max_tpot_ms > 0 ? o.max_tpot_ms * 1e-3 : inf;
  const auto wall_start = std::chrono::steady_clock::now();
  auto last_print = wall_start;
  int64_t total = trace.empty() ? o.requests : static_cast<int64_t>(trace.size());
  bool printed = false;     // a progress line waits for its newline (terminal)
  bool progressed = false;  // progress was shown at all: the run is long
  // On a terminal one line rewritten in place; in a log, a plain line every 10 seconds.
  const bool terminal = isatty(fileno(stderr)) != 0;
  config.progress = [&](int64_t done, double sim_s) {
    const auto now = std::chrono::steady_clock::now();
    if (std::chrono::duration<double>(now - last_print).count() < (terminal ? 1.0 : 10.0)) return;
    last_print = now;
    printed = terminal;
    progressed = true;
    std::fprintf(stderr, "%ssimulate: %lld of %lld requests done, %.0f s simulated%s",
                 terminal ? "\r" : "", static_cast<long long>(done), static_cast<long long>(total),
                 sim_s, terminal ? "" : "\n");
  };

  // A closed loop defaults to ten requests per client, as benchmark runs send, and as plan
  // simulates its operating points.
  int64_t requests = o.requests;
  if (closed_loop && !(o.requests_option && *o.requests_option)) {
    const int64_t per_replica = (o.concurrency + config.replicas - 1) / config.replicas;
    requests = ClosedLoopRequests(static_cast<double>(per_replica)) * config.replicas;
    total = requests;
  }
  // The generated stream, with these output lengths (the out-of-phase run spreads them).
  const auto generated = [&](LengthSpec output) {
    return RequestSource({rate, o.burstiness}, {isl_dist, static_cast<double>(o.isl), o.length_cv},
                         output, requests, o.seed, o.duration_s > 0 ? o.duration_s : inf);
  };
  RequestSource source = trace.empty()
                             ? generated({osl_dist, static_cast<double>(o.osl), o.length_cv})
                             : RequestSource(trace);
  SW_ASSIGN_OR_RETURN(SimResult r, Simulate(model, *setup.table, source, config));
  if (printed) std::fprintf(stderr, "\n");
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  // At fixed output lengths a closed loop runs in lockstep; the band covers the same loop out of
  // phase (one client per replica has no wave to leave).
  std::optional<OutOfPhase> phase;
  if (closed_loop && osl_dist == LengthDistribution::kFixed && o.concurrency > config.replicas) {
    RequestSource spread =
        generated({LengthDistribution::kUniform, static_cast<double>(o.osl), kOutOfPhaseOutputCv});
    // A run long enough to show progress is about as long again, without it.
    if (progressed) std::fprintf(stderr, "simulate: the same loop out of phase, for the band\n");
    phase = SimulateOutOfPhase(model, *setup.table, config, spread);
    if (!phase) {
      std::fprintf(stderr,
                   "shardwise: note: the clients out of phase need longer requests than the KV "
                   "cache holds; the band covers the lockstep loop only\n");
    }
  }
  // A closed loop of aggregated replicas is what the serving validation measured; its bands also
  // cover where those measurements fell (measured_spread.h).
  const bool measured = closed_loop && !config.decode_pool;
  const LoadBands bands =
      BandsAtLoad(setup.ttft_band, setup.tpot_band, phase, perf.engine, cluster.gpu.name, measured);

  PrintFormatNotes(cluster.gpu, perf);
  const double capacity_requests_per_s = setup.capacity_requests_per_s;
  // A closed loop offers no rate of its own: its clients wait for their answers, so its queue
  // never holds more than --concurrency requests.
  double offered_requests_per_s = closed_loop ? std::numeric_limits<double>::quiet_NaN() : rate;
  if (!trace.empty() && trace.back().arrival_s > 0) {
    offered_requests_per_s = static_cast<double>(trace.size()) / trace.back().arrival_s;
  }
  const bool overloaded =
      std::isfinite(offered_requests_per_s) && offered_requests_per_s > capacity_requests_per_s;
  if (overloaded) {
    std::fprintf(stderr,
                 "shardwise: warning: the load (%.3g requests/s) exceeds what %s serves "
                 "(about %.3g requests/s at its largest batch): the queue grows for the whole "
                 "run, so latencies depend on --requests; lower --rate or add GPUs\n",
                 offered_requests_per_s, setup.name.c_str(), capacity_requests_per_s);
  }
  const bool has_slo = o.max_ttft_ms > 0 || o.max_tpot_ms > 0;

  const double output_per_gpu = r.OutputTokensPerS() / static_cast<double>(setup.gpus);
  const double output_per_user = r.tpot_s.Mean() > 0 ? 1.0 / r.tpot_s.Mean() : 0.0;
  nlohmann::json series = nlohmann::json::array();
  for (const auto& [t, f] : r.kv_occupancy) series.push_back({{"time_s", t}, {"fraction", f}});
  auto slo = [](double ms) { return ms > 0 ? nlohmann::json(ms * 1e-3) : nlohmann::json(nullptr); };
  const nlohmann::json out = {
      {"command", "simulate"},
      {"model", model.name},
      {"cluster", cluster.name},
      {"layout", setup.name},
      {"deployment", setup.deployment_json},
      {"engine", perf.engine.name},
      {"moe", setup.moe_json},
      {"speculative", SpeculativeJson(perf.speculative)},
      {"prefix_hit_rate", perf.prefix_hit_rate},
      {"concurrency", closed_loop ? nlohmann::json(o.concurrency) : nlohmann::json(nullptr)},
      {"lengths", trace.empty() ? LengthsJson(o, fixed_lengths) : nlohmann::json(nullptr)},
      {"replicas", config.replicas},
      {"gpus", setup.gpus},
      {"seed", o.seed},
      {"requests", r.requests},
      {"preemptions", r.preemptions},
      {"iterations", r.steps},
      {"makespan_s", r.makespan_s},
      {"load",
       {{"offered_requests_per_s", std::isfinite(offered_requests_per_s)
                                       ? nlohmann::json(offered_requests_per_s)
                                       : nlohmann::json(nullptr)},
        {"capacity_requests_per_s", capacity_requests_per_s},
        {"overloaded", overloaded}}},
      {"throughput",
       {{"input_tokens_per_s", r.InputTokensPerS()},
        {"output_tokens_per_s", r.OutputTokensPerS()},
        {"output_tokens_per_s_per_gpu", output_per_gpu},
        {"output_tokens_per_s_per_user", output_per_user},
        {"requests_per_s",
         r.makespan_s > 0 ? static_cast<double>(r.requests) / r.makespan_s : 0.0}}},
      {"ttft_s", WithBand(DistributionJson(r.ttft_s), bands.ttft)},
      {"tpot_s", WithBand(DistributionJson(r.tpot_s), bands.tpot)},
      {"client_phase", ClientPhaseJson(r.ttft_s.Mean(), r.tpot_s.Mean(), phase)},
      {"measured_spread",
       measured ? MeasuredSpreadJson(perf.engine, cluster.gpu.name) : nlohmann::json(nullptr)},
      {"assumed_inputs", bands.assumed_inputs},
      {"itl_s", DistributionJson(r.itl_s)},
      {"e2e_s", DistributionJson(r.e2e_s)},
      {"slo", {{"max_ttft_s", slo(o.max_ttft_ms)}, {"max_tpot_s", slo(o.max_tpot_ms)}}},
      {"goodput",
       has_slo
           ? nlohmann::json{{"request_fraction",
                             r.requests > 0 ? r.goodput_requests / static_cast<double>(r.requests)
                                            : 0.0},
                            {"output_tokens_per_s",
                             r.makespan_s > 0 ? r.goodput_output_tokens / r.makespan_s : 0.0}}
           : nlohmann::json(nullptr)},
      {"utilization", {{"busy_fraction", r.utilization}, {"mfu", r.mfu}}},
      {"kv_transfer_s", config.decode_pool ? nlohmann::json{{"mean", r.kv_transfer_s_mean}}
                                           : nlohmann::json(nullptr)},
      {"kv_occupancy",
       {{"mean_fraction", r.kv_occupancy_mean},
        {"max_fraction", r.kv_occupancy_max},
        {"series", series}}},
      {"cost",
       {{"usd_per_mtok_output", r.usd_per_mtok_output},
        {"usd_per_gpu_hour", cluster.gpu.usd_per_gpu_hour}}}};
  if (o.json) {
    PrintJson(out);
    return o.html.Write(out);
  }
  const std::string arrivals =
      closed_loop      ? fmt::format("closed loop, {} clients", o.concurrency)
      : !trace.empty() ? "trace " + o.trace
      : std::isinf(rate)
          ? std::string("offline (all at t = 0)")
          : fmt::format(
                "{} {:g} req/s",
                o.burstiness == 1.0 ? "Poisson" : fmt::format("bursty (CV {:g})", o.burstiness),
                rate);
  std::cout << fmt::format(
      "simulate: {} on {} ({} GPUs), {} {} ({}), {}, {}, ISL {} / OSL {}{}\n"
      "{} request{} finished over {} simulated ({} iteration{}, {} preemption{}) in {} wall\n\n",
      model.name, cluster.name, setup.gpus, config.decode_pool ? "deployment" : "layout",
      setup.name, setup.shape, perf.engine.name, arrivals, std::llround(mean_isl),
      std::llround(mean_osl),
      !trace.empty() || fixed_lengths
          ? std::string()
          : fmt::format(" ({} / {}, CV {:g})", o.isl_dist, o.osl_dist, o.length_cv),
      r.requests, r.requests == 1 ? "" : "s", FormatSeconds(r.makespan_s), r.steps,
      r.steps == 1 ? "" : "s", r.preemptions, r.preemptions == 1 ? "" : "s", FormatSeconds(wall_s));
  // The band of the model's mean (perf/uncertainty.h) where the step model gives one.
  Table table({"latency", "p50", "p90", "p99", "mean", "band"});
  auto row = [&](const char* name, const LogHistogram& h, const BandSpec& spec) {
    std::string text = spec.relative > 0 ? fmt::format("±{:.0f}%", 100 * spec.relative) : "";
    if (spec.other_mean || spec.measured) {
      const Band b = LatencyBand(h.Mean(), spec);
      text = fmt::format("{} to {}", FormatSeconds(b.low), FormatSeconds(b.high));
    }
    table.AddRow({name, FormatSeconds(h.Percentile(50)), FormatSeconds(h.Percentile(90)),
                  FormatSeconds(h.Percentile(99)), FormatSeconds(h.Mean()), text});
  };
  row("TTFT", r.ttft_s, bands.ttft);
  row("TPOT", r.tpot_s, bands.tpot);
  row("ITL", r.itl_s, BandSpec{});
  row("end-to-end", r.e2e_s, BandSpec{});
  std::cout << table.Render();
  std::cout << fmt::format(
      "\nthroughput   {:.0f} input and {:.0f} output tokens/s ({:.1f} per GPU, {:.1f} per user)\n"
      "goodput      {}\n"
      "utilization  {:.1f}% busy, MFU {:.1f}%, KV cache {:.1f}% full on average ({:.1f}% at most)\n"
      "cost         ${:.3f} per million output tokens at ${:.2f} per GPU-hour\n",
      r.InputTokensPerS(), r.OutputTokensPerS(), output_per_gpu, output_per_user,
      has_slo
          ? fmt::format(
                "{:.1f}% of requests meet the SLOs ({:.0f} output tokens/s)",
                r.requests > 0 ? 100.0 * r.goodput_requests / static_cast<double>(r.requests) : 0.0,
                r.makespan_s > 0 ? r.goodput_output_tokens / r.makespan_s : 0.0)
          : std::string("not measured: no SLO given (--max-ttft-ms, --max-tpot-ms)"),
      100 * r.utilization, 100 * r.mfu, 100 * r.kv_occupancy_mean, 100 * r.kv_occupancy_max,
      r.usd_per_mtok_output, cluster.gpu.usd_per_gpu_hour);
  if (config.decode_pool) {
    std::cout << fmt::format("KV transfer  {} per request on average over {} ({}, {})\n",
                             FormatSeconds(r.kv_transfer_s_mean), setup.link,
                             KvTransferModeName(setup.transfer_mode), "prefill to decode pool");
  }
  if (overloaded) {
    std::cout << fmt::format(
        "overloaded   {:.3g} requests/s offered, about {:.3g} served at most: the latencies "
        "above grow with the run's length\n",
        offered_requests_per_s, capacity_requests_per_s);
  }
  if (closed_loop) PrintClosedLoopNotes(o, config, phase);
  if (measured) {
    std::cout << MeasuredSpreadLine(perf.engine, cluster.gpu.name, "the bands cover that");
  }
  if (!o.layout.empty() && !config.decode_pool && setup.gpus < cluster.num_gpus) {
    PrintIdleGpus(o.layout, setup.gpus, cluster.num_gpus);
  }
  return o.html.Write(out);
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
  opts->disagg.AddTo(sub);
  opts->rate_option =
      sub->add_option("--rate", opts->rate, "Requests per second, or 'inf' for offline")
          ->capture_default_str();
  opts->concurrency_option = sub->add_option(
      "--concurrency", opts->concurrency,
      "Closed loop: N clients, each sending its next request when its previous one completes "
      "(as vllm bench serve --max-concurrency); excludes --rate");
  opts->burstiness_option =
      sub->add_option("--burstiness", opts->burstiness,
                      "CV of inter-arrival gaps (1 = Poisson, > 1 bursty gamma arrivals)")
          ->capture_default_str();
  sub->add_option("--trace", opts->trace, "CSV of arrival_s,input_tokens,output_tokens");
  sub->add_option("--isl", opts->isl, "Mean prompt tokens")->capture_default_str();
  sub->add_option("--osl", opts->osl, "Mean output tokens")->capture_default_str();
  sub->add_option("--isl-dist", opts->isl_dist, "fixed, uniform or lognormal")
      ->capture_default_str();
  sub->add_option("--osl-dist", opts->osl_dist, "fixed, uniform or lognormal")
      ->capture_default_str();
  opts->length_cv_option = sub->add_option("--length-cv", opts->length_cv,
                                           "CV of the uniform or lognormal length distributions")
                               ->capture_default_str();
  opts->requests_option =
      sub->add_option("--requests", opts->requests,
                      "Requests to simulate (closed loop: default ten per client, at least 200)")
          ->capture_default_str();
  sub->add_option("--duration", opts->duration_s, "Stop arrivals after this many seconds")
      ->check(kPositiveFinite);
  sub->add_option("--seed", opts->seed, "Random seed")
      ->check(kUnsignedInteger)
      ->capture_default_str();
  opts->router_option =
      sub->add_option("--router", opts->router,
                      "round-robin or least-loaded (default: round-robin; least-loaded for "
                      "--concurrency)");
  opts->admission_option =
      sub->add_option("--admission", opts->admission,
                      "no-evict (reserve prompt + output KV, TensorRT-LLM's default) or "
                      "max-utilization (reserve the prompt, preempt when full, as vLLM); default: "
                      "the engine's");
  opts->max_batch_option = sub->add_option(
      "--max-batch", opts->max_batch,
      "Sequences running at once per attention rank: per replica, or per DP attention rank of "
      "an attention-DP layout such as dp8ep8 (default: the engine's max_num_seqs)");
  sub->add_option("--max-ttft-ms", opts->max_ttft_ms, "Goodput SLO: time to first token")
      ->check(kPositiveFinite);
  sub->add_option("--max-tpot-ms", opts->max_tpot_ms, "Goodput SLO: time per output token")
      ->check(kPositiveFinite);
  sub->add_flag("--json", opts->json, "Print JSON");
  opts->html.AddTo(sub);
  BindCommand(sub, opts, result, RunSimulate);
}

}  // namespace shardwise::cli
