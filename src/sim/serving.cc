#include "shardwise/sim/serving.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "shardwise/common/decimal.h"
#include "shardwise/common/format.h"

namespace shardwise {
namespace {

// An offline batch without a count: its requests.
constexpr int64_t kDefaultOpenLoopRequests = 1000;

// One pool of the simulation: its replicas, batching and KV room, and its step table, which
// spans batches up to what the KV cache admits (four times the estimate's, for shorter
// requests) within the pool's batch limit and requests up to `longest_tokens`.
StatusOr<SimPool> PoolConfig(const Pool& pool, const PoolEstimate& e, int64_t longest_tokens,
                             std::shared_ptr<const StepTable>& table) {
  const BatchPolicy batch = pool.Batch();
  const int64_t table_batch =
      std::min<int64_t>(batch.max_batch, std::max<int64_t>(1, e.one.memory.max_sequences * 4));
  SW_ASSIGN_OR_RETURN(StepTable built, StepTable::Build(*e.step, table_batch, longest_tokens,
                                                        pool.perf.max_batched_tokens));
  table = std::make_shared<const StepTable>(std::move(built));
  SimPool p;
  p.table = table.get();
  p.role = pool.role;
  p.replicas = pool.Replicas();
  p.gpus_per_replica = pool.layout.InstanceGpus();
  p.attention_dp = pool.layout.AttentionDp();
  p.pipeline_stages = pool.layout.pp;
  p.batch = batch;
  p.kv_capacity_tokens = e.one.memory.kv_capacity_tokens;
  p.state_tokens_per_sequence = e.one.memory.state_tokens_per_sequence;
  const GpuSpec& gpu = pool.cluster.gpu;
  p.peak_flops_per_s = gpu.PeakFlopsPerS(gpu.ComputeDtypeFor(pool.perf.weight_dtype));
  p.usd_per_gpu_hour = gpu.usd_per_gpu_hour;
  return p;
}

// Can the decode pool hold what the prefill pool sends it? Each request decodes for about OSL
// steps at the pool's full-batch TPOT; Little's law gives the sequences in flight.
Status CheckDecodePool(const Deployment& d, const DeploymentEstimate& e, const Workload& lengths,
                       const OfferedLoad& offered) {
  const PoolEstimate& dec = e.decode();
  const MemoryPerGpu& dm = dec.one.memory;
  const double residence_s = static_cast<double>(lengths.output_tokens) * dec.at_batch.tpot_s;
  const double decode_sequences =
      static_cast<double>(d.decode().workers) * static_cast<double>(dm.max_sequences);
  const double arriving_per_s = std::min(offered.rate_per_s, e.passed_requests_per_s);
  const double needed = std::min(offered.max_in_flight, arriving_per_s * residence_s);
  if (needed <= decode_sequences) return Status();
  const double per_worker = static_cast<double>(std::max<int64_t>(1, dm.max_sequences));
  return FailedPrecondition(
      fmt::format("the decode pool ({} x {}) holds {:.0f} sequences of {} + {} tokens, but the "
                  "prefill pool sends it {:.2f} requests/s{} that each decode for {}: {:.0f} at "
                  "once; use `decode_workers` {:.0f} or more, or a lower load",
                  d.decode().workers, d.decode().layout.ToString(), decode_sequences,
                  lengths.prompt_tokens, lengths.output_tokens, arriving_per_s,
                  arriving_per_s == e.front_end_requests_per_s
                      ? " (what its API servers tokenize, one prompt at a time each)"
                      : "",
                  FormatSeconds(residence_s), needed, std::ceil(needed / per_worker)),
      "decode_workers");
}

bool IsClosedLoop(const Scenario& s) { return std::holds_alternative<ClosedLoop>(s.load); }

// The scenario's request stream with these output lengths, `count` requests (of the simulated
// replicas, `keep` of every `of` arrivals of an open loop).
RequestSource Source(const Scenario& s, int64_t count, const LengthSpec& output, int64_t keep = 1,
                     int64_t of = 1) {
  if (!s.trace.empty()) return RequestSource(s.trace);
  // A closed loop's clients set its arrivals; its stream only supplies lengths.
  const OpenLoop open = IsClosedLoop(s) ? OpenLoop{} : std::get<OpenLoop>(s.load);
  RequestSource source({open.rate_per_s, open.burstiness_cv}, s.input, output, count, s.seed,
                       IsClosedLoop(s) ? std::numeric_limits<double>::infinity() : s.stop_after_s);
  if (of > 1) source.KeepOnly(keep, of);
  return source;
}

// Whether the scenario leaves the run's length to the steady state: no count, trace or cutoff
// given, and arrivals that are a load (an open loop at a finite rate, or a closed loop).
bool Sized(const Scenario& s) {
  if (s.requests > 0 || !s.trace.empty() || std::isfinite(s.stop_after_s)) return false;
  if (const auto* open = std::get_if<OpenLoop>(&s.load)) return std::isfinite(open->rate_per_s);
  return true;
}

// Requests in flight per replica of an open loop at `rate` per replica (Little's law): the rate
// x end-to-end time, the end-to-end time from the step table at that batch.
double InFlightAtRate(const ServingSetup& setup, double rate, const Workload& w) {
  const SimPool& pool = setup.config.pools.front();
  const double context = static_cast<double>(w.prompt_tokens) + w.output_tokens / 2.0;
  const double cap = static_cast<double>(pool.batch.max_batch);
  const SimPool& decode = setup.config.pools.back();
  double in_flight = 1;
  for (int i = 0; i < 30; ++i) {  // a fixed point of L = rate x (TTFT + OSL x TPOT(L))
    const double tpot = decode.table->DecodeSeconds(std::min(in_flight, cap), context);
    const double next =
        rate * (setup.estimate.unloaded_ttft_s + static_cast<double>(w.output_tokens) * tpot);
    in_flight = std::min(cap, std::max(1.0, 0.5 * (in_flight + next)));
  }
  return in_flight;
}

// Requests in flight per replica of the first pool: a closed loop's clients, an open loop's as
// InFlightAtRate.
double InFlightPerReplica(const ServingSetup& setup, const Scenario& s, const Workload& w) {
  const double replicas = static_cast<double>(setup.config.pools.front().replicas);
  if (const auto* closed = std::get_if<ClosedLoop>(&s.load)) {
    return static_cast<double>(closed->clients) / replicas;
  }
  return InFlightAtRate(setup, std::get<OpenLoop>(s.load).rate_per_s / replicas, w);
}

// The replicas of the first pool simulated: at most kSampledReplicas of an aggregated pool whose
// replicas are independent (round-robin arrivals, or a balanced closed loop). A disaggregated
// deployment of x prefill and y decode workers is k = gcd(x, y) identical sub-deployments of
// x/k and y/k workers, each seeing every k-th request: one of them is simulated.
int64_t SimulatedReplicas(const ServingSetup& setup, const Scenario& s) {
  const int64_t replicas = setup.config.pools.front().replicas;
  if (setup.config.disaggregated()) {
    return replicas / std::gcd(replicas, setup.config.pools.back().replicas);
  }
  const bool closed = IsClosedLoop(s);
  const bool round_robin =
      !s.router || std::holds_alternative<RoundRobinRouter>(*s.router) || closed;
  if (!round_robin) return replicas;
  int64_t sampled = std::min(replicas, kSampledReplicas);
  if (const auto* loop = std::get_if<ClosedLoop>(&s.load)) {
    const double per_replica =
        std::max(1.0, static_cast<double>(loop->clients) / static_cast<double>(replicas));
    sampled = std::min(
        sampled,
        std::max<int64_t>(1, static_cast<int64_t>(std::ceil(kSampledInFlight / per_replica))));
  }
  return sampled;
}

// Requests after the measured window, enough to keep the load up while its last ones finish.
int64_t TailRequests(double replicas, double in_flight_per_replica) {
  return static_cast<int64_t>(std::ceil(4 * replicas * in_flight_per_replica)) + 100;
}

double Drift(double first, double second) {
  const double mean = 0.5 * (first + second);
  return mean > 0 ? (second - first) / mean : 0.0;
}

// Whether an open loop's window emitted less than its arrivals asked for.
bool FellBehind(const SimResult& r, const Scenario& s) {
  if (IsClosedLoop(s) || r.output_tokens_asked <= 0) return false;
  return r.output_tokens < kServedShareOfOffered * r.output_tokens_asked;
}

// Whether an open loop's TTFT still grows through the window: a queue that has not settled.
bool StillGrowing(const SteadyState& steady, const Scenario& s) {
  return !IsClosedLoop(s) && !steady.converged && steady.ttft_drift > kTtftDriftTolerance;
}

// The coefficient of variation of the gaps between a scenario's arrivals: a generated open
// loop's burstiness, or a trace's own.
double ArrivalCv(const Scenario& s) {
  if (s.trace.empty()) {
    const auto* open = std::get_if<OpenLoop>(&s.load);
    return open ? open->burstiness_cv : 0.0;
  }
  if (s.trace.size() < 3) return 0.0;
  double sum = 0, sum_sq = 0;
  const double n = static_cast<double>(s.trace.size() - 1);
  for (size_t i = 1; i < s.trace.size(); ++i) {
    const double gap = s.trace[i].arrival_s - s.trace[i - 1].arrival_s;
    sum += gap;
    sum_sq += gap * gap;
  }
  const double mean = sum / n;
  return mean > 0 ? std::sqrt(std::max(0.0, sum_sq / n - mean * mean)) / mean : 0.0;
}

// The drift of the mean TTFT and TPOT between the halves of an open loop's requests, where each
// half holds kHalfOverInFlight times the requests in flight at the run's rate, so the first
// half is not all the warm-up from an empty system, the halves are whole (no cutoff), and the
// arrivals no burstier than kMaxHalvesArrivalCv (a burst alone sets one half apart).
void HalvesDrift(const Scenario& s, ServingRun& run) {
  SteadyState& steady = run.steady;
  const SimResult::Half* h = run.result.halves;
  const double replicas = static_cast<double>(run.setup.config.pools.front().replicas);
  if (!std::isfinite(run.offered_requests_per_s) || h[0].requests == 0 || h[1].requests == 0 ||
      ArrivalCv(s) > kMaxHalvesArrivalCv) {
    return;
  }
  const double in_flight =
      InFlightAtRate(run.setup, run.offered_requests_per_s / replicas, ScenarioLengths(s));
  const double shortest = static_cast<double>(std::min(h[0].requests, h[1].requests));
  if (shortest < kHalfOverInFlight * in_flight * replicas) return;
  steady.halves_compared = true;
  steady.ttft_drift = TtftDrift(run.result);
  steady.tpot_drift = Drift(h[0].TpotMean(), h[1].TpotMean());
}

// Whether an open loop of a fixed length queued ever more of its arrivals: the second half of
// its requests waited far longer for their first token than the first half (kGrowingQueueDrift),
// or it served too few of its later arrivals while its system filled (kInSystemSigmas).
bool QueueGrew(const SteadyState& steady, const Scenario& s) {
  return !IsClosedLoop(s) && ((steady.halves_compared && steady.ttft_drift > kGrowingQueueDrift) ||
                              steady.in_system_grew);
}

// The requests in a fixed run's system at its middle and last arrivals, and whether it fell
// behind between them (kInSystemSigmas): judged where the earlier half's requests decoded in
// under half the time to the middle arrival (its system had filled) and the arrivals are no
// burstier than kMaxHalvesArrivalCv.
void InSystemGrowth(const Scenario& s, int64_t count, ServingRun& run) {
  const SimResult& r = run.result;
  SteadyState& steady = run.steady;
  if (IsClosedLoop(s)) return;
  steady.in_system_at_middle = r.in_system_at_middle;
  steady.in_system_at_last = r.in_system_at_last;
  if (!std::isfinite(run.offered_requests_per_s) || r.in_system_at_middle < 0 ||
      r.in_system_at_last < 0 || r.halves[0].requests == 0 || ArrivalCv(s) > kMaxHalvesArrivalCv ||
      r.halves[0].DecodeMean() >= (r.middle_arrival_s - r.first_arrival_s) / 2) {
    return;
  }
  const double middle = static_cast<double>(r.in_system_at_middle);
  const double last = static_cast<double>(r.in_system_at_last);
  const double arrived = static_cast<double>(count - 1 - count / 2);  // after the middle one
  const double served = middle + arrived - last;
  steady.in_system_grew = served < kServedShareOfOffered * arrived &&
                          last - middle > kInSystemSigmas * std::sqrt(middle + last);
}
}  // namespace

double TtftDrift(const SimResult& result) {
  const SimResult::Half* h = result.halves;
  if (h[0].requests == 0 || h[1].requests == 0) return 0;
  return Drift(h[0].TtftMean(), h[1].TtftMean());
}

std::string Slo::PercentileName() const {
  return percentile ? fmt::format("p{:g}", *percentile) : std::string("mean");
}

double Slo::At(const Samples& samples) const {
  return percentile ? samples.Percentile(*percentile) : samples.Mean();
}

StatusOr<std::optional<double>> ParseSloPercentile(std::string_view text) {
  if (text == "mean") return std::optional<double>();
  std::string digits(text);
  if (!digits.empty() && (digits[0] == 'p' || digits[0] == 'P')) digits.erase(0, 1);
  const double p = ParseDecimal(digits).value_or(0);
  if (p > 0 && p < 100) return std::optional<double>(p);
  return FieldError("percentile",
                    fmt::format("`percentile` '{}' must be p50, p90, p99, p99.9 (any number in "
                                "(0, 100) after the p) or mean",
                                text));
}

double ServingRun::BilledOutputTokensPerS() const {
  return std::isfinite(offered_output_tokens_per_s) && !overloaded ? offered_output_tokens_per_s
                                                                   : OutputTokensPerS();
}

bool ServingRun::MeetsSlo() const {
  return !overloaded && TtftAtSlo() <= slo.max_ttft_s && TpotAtSlo() <= slo.max_tpot_s;
}

OfferedLoad Offered(const Scenario& s) {
  OfferedLoad o;
  if (const auto* closed = std::get_if<ClosedLoop>(&s.load)) {
    o.max_in_flight = static_cast<double>(closed->clients);
  } else {
    o.rate_per_s = std::get<OpenLoop>(s.load).rate_per_s;
  }
  // A fixed count of requests never has more in flight.
  const int64_t count = s.trace.empty() ? s.requests : static_cast<int64_t>(s.trace.size());
  if (count > 0) o.max_in_flight = std::min(o.max_in_flight, static_cast<double>(count));
  return o;
}

Workload ScenarioLengths(const Scenario& s) {
  double isl = s.input.mean, osl = s.output.mean;
  if (!s.trace.empty()) {
    isl = osl = 0;
    const double n = static_cast<double>(s.trace.size());
    for (const TraceRequest& t : s.trace) {
      isl += static_cast<double>(t.input_tokens) / n;
      osl += static_cast<double>(t.output_tokens) / n;
    }
  }
  Workload w;
  w.prompt_tokens = std::max<int64_t>(1, std::llround(isl));
  w.output_tokens = std::max<int64_t>(1, std::llround(osl));
  return w;
}

namespace {

// How far past its mean a lognormal length is taken to reach, in units of 1 + CV.
constexpr double kLognormalReachOverMean = 4.0;

// The longest a length draws, as a multiple of its mean: a uniform one's top, 1 + sqrt(3) CV; a
// lognormal one's 4 (1 + CV) (sim/serving.h).
double Reach(const LengthSpec& l) {
  switch (l.distribution) {
    case LengthDistribution::kUniform:
      return 1 + std::sqrt(3.0) * l.cv;
    case LengthDistribution::kLognormal:
      return kLognormalReachOverMean * (1 + l.cv);
    case LengthDistribution::kFixed:
      break;
  }
  return 1;
}

}  // namespace

int64_t LongestPrompt(const Scenario& s) {
  if (s.trace.empty()) return std::llround(Reach(s.input) * s.input.mean);
  int64_t longest = 0;
  for (const TraceRequest& t : s.trace) longest = std::max(longest, t.input_tokens);
  return longest;
}

int64_t LongestRequest(const Scenario& s) {
  if (!s.trace.empty()) {
    int64_t longest = 0;
    for (const TraceRequest& t : s.trace) {
      longest = std::max(longest, t.input_tokens + t.output_tokens);
    }
    return longest;
  }
  return std::llround(Reach(s.input) * s.input.mean + Reach(s.output) * s.output.mean);
}

LengthSpread SpreadOf(const Scenario& s) {
  const bool input = s.input.distribution != LengthDistribution::kFixed;
  return {s.input.distribution, s.output.distribution, input ? s.input.cv : s.output.cv};
}

StatusOr<ServingSetup> PrepareServing(const ModelSpec& model, const Deployment& d,
                                      const Workload& lengths, int64_t longest_tokens,
                                      const OfferedLoad& offered) {
  ServingSetup s;
  SW_ASSIGN_OR_RETURN(s.estimate, EstimateDeployment(model, d, lengths));
  if (d.disaggregated()) SW_RETURN_IF_ERROR(CheckDecodePool(d, s.estimate, lengths, offered));
  s.tables.resize(d.pools().size());
  for (size_t i = 0; i < d.pools().size(); ++i) {
    SW_ASSIGN_OR_RETURN(SimPool pool,
                        PoolConfig(d.pools()[i], s.estimate.pools[i], longest_tokens, s.tables[i]));
    s.config.pools.push_back(pool);
  }
  s.config.prefix_hit_rate = d.prefill().perf.prefix_hit_rate;
  // Requests enter through the front end of the pool that receives them.
  const EngineProfile& front = d.prefill().perf.engine;
  s.config.request_path_s = front.request_path_s;
  s.config.tokenize_s_per_token = front.tokenize_s_per_token;
  if (d.disaggregated()) {
    s.config.transfer_latency_s = s.estimate.transfer.latency_s;
    s.config.transfer_s_per_token = s.estimate.transfer.exposed_s_per_token;
  }
  return s;
}

Scenario OutOfPhaseScenario(const Scenario& scenario) {
  Scenario spread = scenario;
  spread.output = {LengthDistribution::kUniform, scenario.output.mean, kOutOfPhaseOutputCv};
  spread.out_of_phase = false;
  spread.progress = nullptr;
  return spread;
}

OutOfPhase OutOfPhaseOf(const ServingRun& run) {
  return {run.result.ttft_s.Mean(), run.result.tpot_s.Mean(), run.steady.converged};
}

namespace {

// Sizes a run to the steady state and measures it (ServingRun::steady says how): a warm-up of
// twice the requests in flight, then windows measured one after another in the same run until a
// window's halves agree (serving.h).
// `setup` is the whole deployment's (its in-flight count is per replica of all of them);
// run.setup's config simulates `replicas` of them.
Status MeasureSteadyState(const ModelSpec& model, const ServingSetup& setup,
                          const Scenario& scenario, int64_t replicas, int64_t of, ServingRun& run) {
  const SimConfig& config = run.setup.config;
  const bool closed = IsClosedLoop(scenario);
  SteadyState& steady = run.steady;
  steady.sized = true;
  const Workload lengths = ScenarioLengths(scenario);
  steady.in_flight_per_replica = InFlightPerReplica(setup, scenario, lengths);
  const double r = static_cast<double>(replicas), l = steady.in_flight_per_replica;
  int64_t warmup = static_cast<int64_t>(
      std::ceil(r * std::max(2 * l, static_cast<double>(kMinWarmupPerReplica))));
  const double windows = closed ? kClosedLoopWindows : kOpenLoopWindows;
  int64_t measured = static_cast<int64_t>(
      std::ceil(r * std::max(windows * l, static_cast<double>(kMinMeasuredPerReplica))));
  // Enough requests beyond the SLO's percentile to place it (kSloTailRequests).
  if (const std::optional<double> q = scenario.slo.percentile; q && scenario.slo.Given()) {
    const double tail = std::min(kSloTailMaxRequests, kSloTailRequests / (1 - *q / 100));
    measured = std::max(measured, static_cast<int64_t>(std::llround(tail)));
  }
  const int64_t tail = TailRequests(r, l);
  // The source is lazy: it holds requests for the largest run (windows doubling each time, a
  // tail after each).
  const int64_t most = warmup + (measured << (kMaxDoublings + 1)) + (kMaxDoublings + 2) * tail;
  RequestSource source = Source(scenario, most, scenario.output, replicas, of);
  Simulation sim(model, source, config);
  bool refilled = false;
  for (steady.runs = 1;; ++steady.runs) {
    SW_ASSIGN_OR_RETURN(run.result, sim.Measure(warmup, measured));
    const SimResult::Half* h = run.result.halves;
    steady.ttft_drift = TtftDrift(run.result);
    steady.tpot_drift = Drift(h[0].TpotMean(), h[1].TpotMean());
    // A window the source ran out before (never with `most` above) has not settled.
    steady.converged = run.result.requests >= measured &&
                       std::abs(steady.ttft_drift) <= kTtftDriftTolerance &&
                       std::abs(steady.tpot_drift) <= kTpotDriftTolerance;
    run.overloaded = FellBehind(run.result, scenario);
    // The warm-up is twice the requests in flight the step table predicts. A window that held
    // more than half its warm-up in its system at its middle (every iteration slowed by the
    // prompts it carries, which the table's decode steps leave out, say) began before its
    // system had filled, so what it emitted lags what arrived: unless it emitted too little for
    // a filling system to explain (kFillingServedShare), its shortfall is no verdict, once, and
    // the next window, twice as long, starts after it.
    const bool filling =
        run.overloaded && !closed && !refilled && steady.runs <= kMaxDoublings &&
        2 * run.result.in_system_at_middle > warmup &&
        run.result.output_tokens >= kFillingServedShare * run.result.output_tokens_asked;
    if (filling) {
      refilled = true;
      run.overloaded = false;
    } else if (steady.converged || run.overloaded || steady.runs > kMaxDoublings ||
               run.result.requests < measured) {
      break;
    }
    // A closed loop whose first half was the slower is still shedding its first burst: the
    // next window, as long, starts later. Otherwise (an open loop close to its capacity, or
    // halves apart both ways) the next window is twice as long; an open loop whose queue
    // keeps growing does not settle, and is overloaded (below).
    const bool shedding = closed && (steady.ttft_drift < -kTtftDriftTolerance ||
                                     steady.tpot_drift < -kTpotDriftTolerance);
    warmup = sim.Arrived();
    if (!shedding) measured *= 2;
  }
  steady.warmup_requests = warmup;
  steady.measured_requests = measured;
  run.overloaded = run.overloaded || StillGrowing(steady, scenario);
  if (run.overloaded && !closed && scenario.time_what_overload_serves) {
    // Its window of arrivals can be far shorter than serving them takes: what it served is
    // timed again, the same requests from the window's first arrival until its last finishes.
    SimConfig drained = config;
    drained.window_until_drained = true;
    RequestSource again = Source(scenario, most, scenario.output, replicas, of);
    Simulation rerun(model, again, drained);
    SW_ASSIGN_OR_RETURN(run.result, rerun.Measure(warmup, measured));
  }
  run.requests = run.result.arrived;
  // Every request the run could draw arrived and none finished in its window: a few very long
  // draws of a wide spread held it open while the short ones cycled. Nothing was measured, so
  // nothing may be reported (its latencies would read 0 and meet any SLO).
  if (run.result.requests == 0) {
    return FailedPrecondition(fmt::format(
        "no request finished in the measured window of {} requests: the {} it drew ran out "
        "first, held open by the longest of a wide length spread; lower `length_cv`",
        measured, most));
  }
  return Status();
}

}  // namespace

StatusOr<ServingRun> Serve(const ModelSpec& model, const Deployment& deployment,
                           const Scenario& scenario) {
  SW_ASSIGN_OR_RETURN(ServingSetup setup,
                      PrepareServing(model, deployment, ScenarioLengths(scenario),
                                     LongestRequest(scenario), Offered(scenario)));
  return Serve(model, setup, scenario);
}

StatusOr<ServingRun> Serve(const ModelSpec& model, const ServingSetup& setup,
                           const Scenario& scenario) {
  ServingRun run;
  run.setup = setup;
  run.slo = scenario.slo;
  SimConfig& config = run.setup.config;
  const bool closed = IsClosedLoop(scenario);
  SteadyState& steady = run.steady;
  steady.replicas = config.pools.front().replicas;
  steady.simulated_replicas =
      Sized(scenario) ? SimulatedReplicas(setup, scenario) : steady.replicas;
  const int64_t replicas = steady.simulated_replicas;
  config.pools.front().replicas = replicas;
  if (config.disaggregated()) config.pools.back().replicas /= steady.replicas / replicas;
  run.replica_scale = static_cast<double>(steady.replicas) / static_cast<double>(replicas);
  if (closed) {
    // The simulated replicas' share of the clients.
    const double clients = static_cast<double>(std::get<ClosedLoop>(scenario.load).clients);
    config.concurrency = std::max<int64_t>(1, std::llround(clients / run.replica_scale));
  }
  // A closed loop keeps the replicas balanced by load, as the engines' data-parallel routers do
  // (vLLM's DP load balancing, SGLang's shortest-queue router): a finished request's client
  // sends its next one to the replica with the fewest in flight.
  config.router = scenario.router.value_or(closed ? RouterPolicy{LeastLoadedRouter{}}
                                                  : RouterPolicy{RoundRobinRouter{}});
  config.max_ttft_s = scenario.slo.max_ttft_s;
  config.max_tpot_s = scenario.slo.max_tpot_s;
  config.stop_after_s = closed ? scenario.stop_after_s : std::numeric_limits<double>::infinity();
  config.progress = scenario.progress;
  // Keep `replicas` of every `steady.replicas` arrivals: those round-robin hands them.
  const int64_t of = closed ? 1 : steady.replicas;
  if (!Sized(scenario)) {
    // A fixed count, a trace, or (a cutoff) as many as arrive before it.
    run.requests = !scenario.trace.empty() ? static_cast<int64_t>(scenario.trace.size())
                   : scenario.requests > 0 ? scenario.requests
                   : std::isfinite(scenario.stop_after_s) ? kMaxRunRequests
                                                          : kDefaultOpenLoopRequests;
    RequestSource source = Source(scenario, run.requests, scenario.output);
    // Every request measured, its halves split in arrival order (at half the duration where
    // one cuts the arrivals off), so a queue that grows through the run shows (the run still
    // drains: no request arrives after them).
    config.measure_from = 0;
    config.measure_count = run.requests;
    if (std::isfinite(scenario.stop_after_s)) config.halves_split_s = scenario.stop_after_s / 2;
    SW_ASSIGN_OR_RETURN(run.result, Simulate(model, source, config));
    steady.measured_requests = run.result.requests;
  } else {
    SW_RETURN_IF_ERROR(MeasureSteadyState(model, setup, scenario, replicas, of, run));
  }
  config.progress = nullptr;

  // At fixed output lengths a closed loop runs in lockstep; the band covers the same loop out
  // of phase (one client per replica has no wave to leave), run to its own steady state as plan
  // runs it. It never fails the run.
  if (closed && scenario.out_of_phase && scenario.trace.empty() &&
      scenario.output.distribution == LengthDistribution::kFixed && config.concurrency > replicas) {
    const StatusOr<ServingRun> drift = Serve(model, setup, OutOfPhaseScenario(scenario));
    if (drift.ok()) {
      run.out_of_phase = OutOfPhaseOf(*drift);
    } else {
      run.out_of_phase_failed = true;
    }
  }
  if (!scenario.trace.empty()) {
    // Its own arrivals; all at t = 0 is an offline batch (no rate offered).
    // N requests span N - 1 gaps from the first arrival to the last.
    const double span = scenario.trace.back().arrival_s - scenario.trace.front().arrival_s;
    run.offered_requests_per_s = span > 0 ? static_cast<double>(scenario.trace.size() - 1) / span
                                          : std::numeric_limits<double>::infinity();
  } else if (!closed) {
    run.offered_requests_per_s = std::get<OpenLoop>(scenario.load).rate_per_s;
  }
  double mean_output_tokens = scenario.output.mean;
  if (!scenario.trace.empty()) {
    mean_output_tokens = 0;
    for (const TraceRequest& t : scenario.trace) {
      mean_output_tokens += static_cast<double>(t.output_tokens);
    }
    mean_output_tokens /= static_cast<double>(scenario.trace.size());
  }
  run.offered_output_tokens_per_s = run.offered_requests_per_s * mean_output_tokens;
  // A run the scenario fixed (its length is the user's) is overloaded when the analytic capacity
  // is below the offered rate, or when its own queue grew through the run.
  if (!steady.sized) {
    HalvesDrift(scenario, run);
    InSystemGrowth(scenario, run.requests, run);
    run.overloaded = (std::isfinite(run.offered_requests_per_s) &&
                      run.offered_requests_per_s > run.setup.estimate.capacity_requests_per_s) ||
                     QueueGrew(steady, scenario);
  }
  // The same bill spread over the tokens billed (plan/load.h's operating point), not the
  // window's measured count with its arrivals' noise.
  const double billed = run.BilledOutputTokensPerS();
  if (billed > 0 && run.OutputTokensPerS() > 0) {
    run.result.usd_per_mtok_output *= run.OutputTokensPerS() / billed;
  }
  return run;
}

}  // namespace shardwise
