// The one serving evaluation (Serve): a load simulation warms up, measures its steady state and
// checks it settled; an open loop that outruns the deployment is overloaded whatever its SLOs;
// identical replicas are sampled exactly; SLO percentiles parse by field.
#include "shardwise/sim/serving.h"

#include <gtest/gtest.h>

#include "shardwise/model/catalog.h"

namespace shardwise {
namespace {

// Llama-3.1-8B replicas of one H100 each (fp8), 512-token prompts and 64 output tokens.
struct Replicas {
  ModelSpec model = LoadModel("llama-3.1-8b").value();
  Deployment deployment;
  Scenario scenario;

  explicit Replicas(const std::string& layout, int64_t nodes = 1) {
    const ClusterSpec cluster = WithNodes(LoadCluster("dgx-h100").value(), nodes).value();
    PerfOptions perf;
    perf.weight_dtype = perf.kv_dtype = Dtype::kFp8;
    deployment =
        Deployment::Aggregated(model, EnginePool(PoolRole::kAggregated, ParseLayout(layout).value(),
                                                 1, cluster, perf, 256))
            .value();
    scenario.input = {LengthDistribution::kFixed, 512, 0};
    scenario.output = {LengthDistribution::kFixed, 64, 0};
  }

  ServingRun Run() const {
    StatusOr<ServingRun> run = Serve(model, deployment, scenario);
    EXPECT_TRUE(run.ok()) << run.status().message();
    return std::move(run).value();
  }
};

TEST(Serve, ClosedLoopWarmsUpThenMeasuresItsSteadyState) {
  // 16 clients on one replica: L = 16 in flight, so the warm-up is max(2 x 16, 50) = 50
  // requests and the window max(4 x 16, 500) = 500, as SteadyState states.
  Replicas r("tp1");
  r.scenario.load = ClosedLoop{16};
  const ServingRun run = r.Run();
  EXPECT_TRUE(run.steady.sized);
  EXPECT_DOUBLE_EQ(run.steady.in_flight_per_replica, 16);
  EXPECT_EQ(run.steady.warmup_requests, 50);
  EXPECT_EQ(run.steady.measured_requests, 500);
  EXPECT_EQ(run.result.requests, 500);
  EXPECT_GE(run.result.arrived, 550);
  EXPECT_TRUE(run.steady.converged);
  EXPECT_LE(std::abs(run.steady.ttft_drift), kTtftDriftTolerance);
  // A closed loop's clients each have one request in flight: Little's law gives the request
  // rate from the mean end-to-end time, whatever the scheduler did.
  EXPECT_NEAR(run.RequestsPerS() * run.result.e2e_s.Mean() / 16.0, 1.0, 0.05);
}

TEST(Serve, AnOpenLoopBelowCapacityEmitsWhatItsArrivalsAskFor) {
  // 16 replicas (two DGX nodes) at 100 requests/s, well below what 16 H100s serve of 512/64
  // requests: in a steady state the tokens emitted per second are the arrivals' rate x 64. Eight
  // of the replicas are simulated, each with exactly the arrivals round-robin gives it.
  Replicas r("dp16", 2);
  r.scenario.load = OpenLoop{100, 1.0};
  const ServingRun run = r.Run();
  EXPECT_EQ(run.steady.replicas, 16);
  EXPECT_EQ(run.steady.simulated_replicas, kSampledReplicas);
  EXPECT_DOUBLE_EQ(run.replica_scale, 2.0);
  EXPECT_FALSE(run.overloaded);
  EXPECT_NEAR(run.OutputTokensPerS() / (100.0 * 64), 1.0, 0.05);
  EXPECT_NEAR(run.RequestsPerS() / 100.0, 1.0, 0.05);
  EXPECT_TRUE(run.MeetsSlo());  // no SLO given: keeping up is all it asks
}

TEST(Serve, SampledReplicasSizeTheirWindowsPerReplicaOfTheWhole) {
  // 160 clients over 16 replicas, 8 of them simulated with their 80 clients: 10 in flight per
  // replica, so the warm-up is 8 x max(2 x 10, 50) = 400 requests and the window
  // 8 x max(4 x 10, 500) = 4,000 (SteadyState's rule), not sized as if the 8 held all 160.
  Replicas r("dp16", 2);
  r.scenario.load = ClosedLoop{160};
  const ServingRun run = r.Run();
  EXPECT_EQ(run.steady.simulated_replicas, kSampledReplicas);
  EXPECT_DOUBLE_EQ(run.steady.in_flight_per_replica, 10);
  EXPECT_EQ(run.steady.warmup_requests, 400);
  EXPECT_EQ(run.steady.measured_requests, 4000);
}

TEST(Serve, AnOpenLoopAboveCapacityIsOverloadedWhateverItsSlos) {
  // One replica at ten times what the step model says it serves at its largest batch: the
  // queue grows for the whole run, the window emits far less than its arrivals ask for, and
  // no SLO (none is given) can make that a deployment that serves the load.
  Replicas r("tp1");
  const ServingSetup setup =
      PrepareServing(r.model, r.deployment, ScenarioLengths(r.scenario), LongestRequest(r.scenario))
          .value();
  const double capacity = setup.estimate.capacity_requests_per_s;
  r.scenario.load = OpenLoop{10 * capacity, 1.0};
  const ServingRun run = r.Run();
  EXPECT_TRUE(run.overloaded);
  EXPECT_FALSE(run.MeetsSlo());
  // What it served is timed from the window's first arrival until its last request finished:
  // about what the step model says it serves at its largest batch, not the offered rate.
  EXPECT_LT(run.RequestsPerS(), 0.5 * 10 * capacity);
  EXPECT_NEAR(run.RequestsPerS(), capacity, 0.5 * capacity);
  // Prompt tokens count at the rate served too, not the rate offered (10 x capacity x 512
  // tokens): every prompt here has the scenario's fixed length, so input tokens/s is requests
  // served/s times that length, and well under what was offered.
  EXPECT_NEAR(run.InputTokensPerS(), run.RequestsPerS() * r.scenario.input.mean, 1e-6);
  EXPECT_LT(run.InputTokensPerS(), kServedShareOfOffered * 10 * capacity * r.scenario.input.mean);
}

TEST(Serve, AFixedRequestCountIsMeasuredWhole) {
  // --requests overrides the steady state: every request measured, none warm-up.
  Replicas r("tp1");
  r.scenario.load = ClosedLoop{4};
  r.scenario.requests = 40;
  const ServingRun run = r.Run();
  EXPECT_FALSE(run.steady.sized);
  EXPECT_EQ(run.result.requests, 40);
  EXPECT_EQ(run.result.arrived, 40);
}

// A trace of `steady` requests 0.2 s apart (5/s), then `burst` more 1 ms apart (1,000/s).
std::vector<TraceRequest> SteadyThenBurst(int steady, int burst) {
  std::vector<TraceRequest> trace;
  double t = 0;
  for (int i = 0; i < steady + burst; ++i) {
    trace.push_back({t, 512, 64});
    t += i < steady ? 0.2 : 0.001;
  }
  return trace;
}

TEST(Serve, AFixedRunWhoseQueueGrowsIsOverloadedThoughItsMeanRateFits) {
  // 500 requests at 5/s, then 500 in half a second. By hand: a 512-token prompt of Llama-3.1-8B
  // is 2 x 8.0e9 x 512 = 8.2 TFLOP, so one H100 at its whole FP8 peak (1,979 TFLOP/s) prefills
  // at most ~240 prompts/s: most of the burst queues, and the later half of the run waits far
  // longer for its first token than the earlier half, though the run's mean rate (1,000 over
  // 100.5 s, ~10/s) is below the analytic capacity.
  Replicas r("tp1");
  r.scenario.trace = SteadyThenBurst(500, 500);
  const ServingRun run = r.Run();
  ASSERT_LT(run.offered_requests_per_s, run.setup.estimate.capacity_requests_per_s);
  EXPECT_FALSE(run.steady.sized);
  EXPECT_TRUE(run.steady.halves_compared);
  EXPECT_GT(run.steady.ttft_drift, kGrowingQueueDrift);
  EXPECT_TRUE(run.overloaded);
  EXPECT_FALSE(run.MeetsSlo());
}

TEST(Serve, AFixedRunAtASteadyLowRateIsNotOverloaded) {
  // The same 1,000 requests all at 5/s: 41 TFLOP/s of prefill, 2% of the GPU's FP8 peak, so no
  // queue forms and the halves wait alike.
  Replicas r("tp1");
  r.scenario.trace = SteadyThenBurst(1000, 0);
  const ServingRun run = r.Run();
  EXPECT_TRUE(run.steady.halves_compared);
  EXPECT_LT(std::abs(run.steady.ttft_drift), kGrowingQueueDrift);
  EXPECT_FALSE(run.overloaded);
}

TEST(Serve, ABurstyFixedRunIsNotJudgedByItsHalves) {
  // 1,000 requests at 5/s with arrival gaps of CV 10 (by hand, 5 x 8.2 TFLOP/s of prefill is 2%
  // of the GPU's FP8 peak): a burst alone can set one half's TTFT apart, which read as
  // "overloaded". Such runs are judged by the analytic capacity only.
  Replicas r("tp1");
  r.scenario.load = OpenLoop{5, 10.0};
  r.scenario.requests = 1000;
  const ServingRun run = r.Run();
  EXPECT_FALSE(run.steady.halves_compared);
  EXPECT_FALSE(run.overloaded);
}

TEST(Serve, AFixedRunShorterThanItsWarmUpIsNotJudgedByItsHalves) {
  // 40 requests at 50/s. By hand, each decodes 64 tokens at no less than the HBM time of the
  // fp8 weights, 8.0 GB / 3.35 TB/s = 2.4 ms a token, so more than 50 x 64 x 2.4 ms = 7.7 are in
  // flight (Little's law), and a half of 20 requests is under kHalfOverInFlight (4) times that:
  // the run is its warm-up from an empty system, whose later half always waits longer.
  Replicas r("tp1");
  r.scenario.load = OpenLoop{50, 1.0};
  r.scenario.requests = 40;
  const ServingRun run = r.Run();
  EXPECT_FALSE(run.steady.halves_compared);
  EXPECT_FALSE(run.overloaded);
}

TEST(Serve, ACutoffRunsEveryRequestArrivingBeforeIt) {
  // --rate 10 --duration 300 ran 1,000 requests (95 s). By hand: a Poisson stream at 10/s for
  // 300 s brings 3,000 requests on average, within 10% (5 standard deviations of sqrt(3,000)).
  Replicas r("tp1");
  r.scenario.load = OpenLoop{10, 1.0};
  r.scenario.stop_after_s = 300;
  const ServingRun run = r.Run();
  EXPECT_NEAR(static_cast<double>(run.result.requests), 3000.0, 300.0);
  // Its halves part at 150 s, by arrival: each whole (the run drains), each about 1,500
  // requests, and alike: 10/s of 512-token prompts is 82 TFLOP/s of prefill (2 x 8.0e9 x 512
  // each), 4% of one H100's FP8 peak.
  EXPECT_TRUE(run.steady.halves_compared);
  EXPECT_NEAR(static_cast<double>(run.result.halves[0].requests), 1500.0, 250.0);
  EXPECT_LT(std::abs(run.steady.ttft_drift), kGrowingQueueDrift);
  EXPECT_FALSE(run.overloaded);
}

TEST(Serve, ACutoffRunShowsAGrowingQueueInItsHalves) {
  // --rate 150 --duration 20, above what one H100 serves of these requests: the queue grows from
  // empty through the run. By hand, a wait growing linearly in the send time averages T/4 x k
  // over the first half of the sends and 3T/4 x k over the second, 3x (a drift of +2, beyond
  // kGrowingQueueDrift). Each half holds about 150 x 10 = 1,500 sends (5 standard deviations of
  // a Poisson count, 195).
  Replicas r("tp1");
  r.scenario.load = OpenLoop{150, 1.0};
  r.scenario.stop_after_s = 20;
  const ServingRun run = r.Run();
  ASSERT_GT(run.offered_requests_per_s, run.setup.estimate.capacity_requests_per_s);
  ASSERT_TRUE(run.steady.halves_compared);
  EXPECT_NEAR(static_cast<double>(run.result.halves[0].requests), 1500.0, 195.0);
  EXPECT_NEAR(static_cast<double>(run.result.halves[1].requests), 1500.0, 195.0);
  EXPECT_GT(run.steady.ttft_drift, kGrowingQueueDrift);
  EXPECT_TRUE(run.overloaded);
}

TEST(Scenario, TheLongestPromptIsAsFarAsItsInputsReach) {
  // Fixed lengths send the mean; a lognormal spread of CV 0.5 reaches 4 x (1 + 0.5) = 6 times
  // its mean (serving.h), a uniform one of CV 0.5 1 + sqrt(3) x 0.5 = 1.866 times; a trace sends
  // its own longest, whatever its outputs.
  Scenario s;
  s.input = {LengthDistribution::kFixed, 1024, 0};
  s.output = {LengthDistribution::kLognormal, 256, 0.5};
  EXPECT_EQ(LongestPrompt(s), 1024);
  s.input = {LengthDistribution::kLognormal, 1024, 0.5};
  EXPECT_EQ(LongestPrompt(s), 6144);
  s.input = {LengthDistribution::kUniform, 1000, 0.5};
  EXPECT_EQ(LongestPrompt(s), 1866);
  s.trace = {{0.0, 300, 9000}, {0.5, 2000, 10}, {1.0, 700, 50}};
  EXPECT_EQ(LongestPrompt(s), 2000);
}

TEST(RequestSource, KeepOnlyTakesWhatRoundRobinHandsTheFirstReplicas) {
  // Round-robin over 8 replicas hands replicas 0 and 1 the arrivals whose index mod 8 is 0 or 1:
  // the kept stream is exactly those of the full one.
  const LengthSpec input{LengthDistribution::kLognormal, 1000, 0.5};
  const LengthSpec output{LengthDistribution::kUniform, 200, 0.3};
  RequestSource full({50, 1.0}, input, output, 80, 7);
  RequestSource kept({50, 1.0}, input, output, 20, 7);
  kept.KeepOnly(2, 8);
  std::vector<TraceRequest> expected;
  for (int i = 0; i < 80; ++i) {
    const TraceRequest t = *full.Next();
    if (i % 8 < 2) expected.push_back(t);
  }
  for (const TraceRequest& e : expected) {
    const std::optional<TraceRequest> k = kept.Next();
    ASSERT_TRUE(k.has_value());
    EXPECT_DOUBLE_EQ(k->arrival_s, e.arrival_s);
    EXPECT_EQ(k->input_tokens, e.input_tokens);
    EXPECT_EQ(k->output_tokens, e.output_tokens);
  }
  EXPECT_FALSE(kept.Next().has_value());
}

TEST(Slo, PercentilesParseByField) {
  EXPECT_EQ(*ParseSloPercentile("p99"), 99.0);
  EXPECT_EQ(*ParseSloPercentile("P99.9"), 99.9);
  EXPECT_EQ(*ParseSloPercentile("50"), 50.0);
  EXPECT_FALSE(ParseSloPercentile("mean")->has_value());
  for (const char* bad : {"p100", "p0", "q99", "", "p99x"}) {
    const auto p = ParseSloPercentile(bad);
    ASSERT_FALSE(p.ok()) << bad;
    EXPECT_EQ(p.status().field(), "percentile");
  }
  Slo slo;
  Samples s;
  for (int i = 1; i <= 100; ++i) s.Add(i);
  EXPECT_DOUBLE_EQ(slo.At(s), 99);  // the default percentile is p99
  slo.percentile.reset();
  EXPECT_DOUBLE_EQ(slo.At(s), 50.5);
  EXPECT_EQ(slo.PercentileName(), "mean");
}

}  // namespace
}  // namespace shardwise
