// `shardwise simulate`: a discrete-event serving simulation of a deployment under traffic
// (api/simulate.h).
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>

#include "command.h"
#include "emit_options.h"
#include "html_output.h"
#include "request_flags.h"
#include "shardwise/common/decimal.h"
#include "shardwise/shardwise.h"
#include "shardwise/text/text.h"
#include "validators.h"

namespace shardwise::cli {
namespace {

struct SimulateOptions {
  api::SimulateRequest request;
  CLI::Option* model = nullptr;
  ClusterFlags cluster;
  ServingFlags serving;
  DeploymentFlags deployment;
  SloFlags slo;
  std::string rate = "10";
  CLI::Option* rate_option = nullptr;
  int64_t concurrency = 0;
  CLI::Option* concurrency_option = nullptr;
  double burstiness = 1.0;
  CLI::Option* burstiness_option = nullptr;
  std::vector<CLI::Option*> lengths;  // --isl, --osl
  LengthSpreadFlags spread;
  CLI::Option* seed = nullptr;
  CLI::Option* router = nullptr;
  CLI::Option* requests = nullptr;
  bool json = false;
  HtmlOptions html;
  EmitOptions emit;
};

StatusOr<double> ParseRate(const std::string& text) {
  if (text == "inf" || text == "offline") return std::numeric_limits<double>::infinity();
  if (const std::optional<double> rate = ParseDecimal(text)) return *rate;  // the API checks it
  return Error(
      fmt::format("--rate '{}' must be a positive number of requests per second, or "
                  "'inf' for offline (everything at t = 0)",
                  text));
}

// The command line's request: its flags, or a saved deployment's question with the flags given
// here on top.
Status BuildRequest(SimulateOptions& o) {
  api::SimulateRequest& r = o.request;
  // 0 is the library's "as the steady state needs": given here, it is out of range.
  if (*o.requests && (r.requests < 1 || r.requests > kMaxRunRequests)) {
    return Error(fmt::format("--requests must be between 1 and {}", kMaxRunRequests));
  }
  r.cluster = o.cluster.values;
  r.serving = o.serving.values;
  r.deployment = o.deployment.values;
  r.slo = o.slo.values;
  if (*o.rate_option) {
    SW_ASSIGN_OR_RETURN(const double rate, ParseRate(o.rate));
    r.rate = rate;
  }
  if (*o.concurrency_option) r.concurrency = o.concurrency;
  if (*o.burstiness_option) r.burstiness = o.burstiness;
  r.workload.lengths = o.spread.Request();
  // A trace, given or replayed from a saved run, fixes each request's arrival and lengths.
  const auto trace_fixes_lengths = [&](const std::string& whose) -> Status {
    if (r.workload.trace.empty()) return Status();
    for (CLI::Option* knob : {o.lengths[0], o.lengths[1], o.spread.isl_dist, o.spread.osl_dist,
                              o.spread.length_cv_option, o.requests}) {
      if (*knob) {
        return Error(
            fmt::format("{} and {} exclude each other: the trace gives each request's "
                        "arrival and lengths",
                        knob->get_name(), whose));
      }
    }
    return Status();
  };
  SW_RETURN_IF_ERROR(trace_fixes_lengths("--trace"));
  SW_ASSIGN_OR_RETURN(const auto saved, LoadReplay(o.deployment, o.serving, o.cluster, o.model));
  if (!saved) return Status();
  api::GivenFields given = GivenOf(o.lengths, o.slo, &o.spread);
  // A trace is the load: the saved rate, concurrency or burstiness does not join it.
  const bool trace = !r.workload.trace.empty();
  given.load = trace || AnyGiven({o.rate_option, o.concurrency_option});
  given.burstiness = trace || Given(o.burstiness_option);
  given.seed = Given(o.seed);
  given.router = Given(o.router);
  api::Replay(*saved, given, r);
  return trace_fixes_lengths(fmt::format("the trace --deployment {} replays", o.deployment.file));
}

// Progress on stderr for long runs: on a terminal one line rewritten in place; in a log, a plain
// line every 10 seconds.
std::function<void(int64_t, double)> Progress(bool& printed) {
  const bool terminal = isatty(fileno(stderr)) != 0;
  auto last =
      std::make_shared<std::chrono::steady_clock::time_point>(std::chrono::steady_clock::now());
  return [terminal, last, &printed](int64_t done, double sim_s) {
    const auto now = std::chrono::steady_clock::now();
    if (std::chrono::duration<double>(now - *last).count() < (terminal ? 1.0 : 10.0)) return;
    *last = now;
    printed = terminal;
    std::fprintf(stderr, "%ssimulate: %lld requests done, %.0f s simulated%s", terminal ? "\r" : "",
                 static_cast<long long>(done), sim_s, terminal ? "" : "\n");
  };
}

Status RunSimulate(SimulateOptions& o) {
  SW_RETURN_IF_ERROR(BuildRequest(o));
  SW_RETURN_IF_ERROR(o.html.Check());
  o.emit.force = o.html.force;
  SW_RETURN_IF_ERROR(o.emit.Validate(o.html.force));
  bool printed = false;
  o.request.progress = Progress(printed);
  const StatusOr<api::ServingReport> rep = api::Simulate(api::Catalog::BuiltIn(), o.request);
  if (printed) std::fprintf(stderr, "\n");
  if (!rep.ok()) return rep.status();
  PrintNotes(rep->notes);
  if (rep->run.overloaded) {
    // ServedShare says where the window kept up while its queue still grew ("2.04 of the 2
    // offered are served" had read as keeping up).
    std::cerr << fmt::format(
        "shardwise: warning: {} falls behind the load: of the {:.3g} requests/s offered it "
        "serves {}, so the queue grows for as long as the run lasts and latencies depend on "
        "its length; lower {} or add GPUs\n",
        rep->deployment.ToString(), rep->run.offered_requests_per_s,
        ServedShare(rep->run.RequestsPerS(), rep->run.offered_requests_per_s),
        o.request.workload.trace.empty() ? "--rate" : "the trace's arrival rate");
  }
  nlohmann::json out = api::ToJson(*rep);
  SW_ASSIGN_OR_RETURN(const Emitted emitted, o.emit.Make(o.request, *rep));
  return o.emit.Finish(emitted, out, o.json, o.html,
                       [&] { std::cout << CliText(text::SimulateText(*rep, o.request)); });
}

}  // namespace

void AddSimulateCommand(CLI::App& app, Status& result) {
  auto opts = std::make_shared<SimulateOptions>();
  api::SimulateRequest& r = opts->request;
  CLI::App* sub = app.add_subcommand(
      "simulate",
      "Discrete-event serving simulation at its steady state: arrivals, continuous batching\n"
      "with chunked prefill, KV admission and preemption, DP replicas behind a router; latency\n"
      "percentiles, goodput under SLOs, utilisation, MFU and cost. Deterministic for a --seed.\n"
      "Example:\n"
      "  shardwise simulate --model llama-3.1-70b --cluster dgx-h100 --layout tp4 --rate 8");
  opts->model =
      sub->add_option("--model", r.model, "Catalog model or config.json")->capture_default_str();
  opts->cluster.AddTo(sub, /*priced=*/true);
  opts->serving.AddTo(sub, true, true);
  opts->deployment.AddTo(
      sub,
      "Parallel layout (default: plan's best for the lengths, ranked offline; plan "
      "--rate or --concurrency ranks layouts at a load)");
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
  sub->add_option("--trace", r.workload.trace, "CSV of arrival_s,input_tokens,output_tokens");
  opts->lengths = {
      sub->add_option("--isl", r.workload.isl, "Mean prompt tokens")->capture_default_str(),
      sub->add_option("--osl", r.workload.osl, "Mean output tokens")->capture_default_str()};
  opts->spread.AddTo(sub);
  opts->requests =
      sub->add_option("--requests", r.requests,
                      "Requests to simulate, all measured (default: as many as the steady state "
                      "needs: a warm-up, then a window checked to have settled)");
  sub->add_option("--duration", r.duration_s, "Stop arrivals after this many seconds")
      ->check(kPositiveFinite);
  opts->seed = sub->add_option("--seed", r.seed, "Random seed")
                   ->check(kUnsignedInteger)
                   ->capture_default_str();
  opts->router =
      sub->add_option("--router", r.router,
                      "round-robin or least-loaded (default: round-robin; least-loaded for "
                      "--concurrency)");
  opts->slo.AddTo(sub, "Goodput SLO");
  sub->add_flag("--json", opts->json, "Print JSON");
  opts->html.AddTo(sub, true);
  opts->emit.AddTo(sub, EmitScope::kBenchmark);
  BindCommand(sub, opts, result,
              [sub](SimulateOptions& o) { return FromReplay(RunSimulate(o), o.deployment, *sub); });
}

}  // namespace shardwise::cli
