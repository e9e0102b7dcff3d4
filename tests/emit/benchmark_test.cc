// Benchmark commands against the tools' documented options and the arithmetic of their length
// distributions:
// - AIPerf 0.3 "aiperf profile" options (ai-dynamo/aiperf docs/cli_options.md).
// - vLLM 0.10.1 "vllm bench serve": random lengths uniform in [L (1 - r), L (1 + r)];
//   --burstiness is the gamma shape k of the gaps (CV 1 / sqrt(k)).
// - SGLang 0.5.0 bench_serving: random lengths uniform in [rho L, L].
#include "shardwise/emit/benchmark.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>

#include "engine_flags.h"

namespace shardwise::emit::bench {
namespace {

const std::set<std::string> kAiperfFlags = {"--model",
                                            "--url",
                                            "--endpoint-type",
                                            "--streaming",
                                            "--synthetic-input-tokens-mean",
                                            "--synthetic-input-tokens-stddev",
                                            "--output-tokens-mean",
                                            "--output-tokens-stddev",
                                            "--extra-inputs",
                                            "--concurrency",
                                            "--request-rate",
                                            "--request-count",
                                            "--warmup-request-count",
                                            "--random-seed"};
const std::set<std::string> kVllmBenchFlags = {"--backend",
                                               "--base-url",
                                               "--endpoint",
                                               "--model",
                                               "--dataset-name",
                                               "--random-input-len",
                                               "--random-output-len",
                                               "--random-range-ratio",
                                               "--num-prompts",
                                               "--ignore-eos",
                                               "--max-concurrency",
                                               "--request-rate",
                                               "--burstiness",
                                               "--seed",
                                               "--percentile-metrics",
                                               "--metric-percentiles",
                                               "--save-result",
                                               "--result-filename"};
const std::set<std::string> kSglangBenchFlags = {"--backend",
                                                 "--host",
                                                 "--port",
                                                 "--model",
                                                 "--dataset-name",
                                                 "--random-input-len",
                                                 "--random-output-len",
                                                 "--random-range-ratio",
                                                 "--num-prompts",
                                                 "--max-concurrency",
                                                 "--request-rate",
                                                 "--warmup-requests",
                                                 "--seed",
                                                 "--output-file"};

BenchmarkInputs Inputs() {
  BenchmarkInputs in;
  in.model = "meta-llama/Llama-3.1-70B";
  in.input = {"fixed", 2048, 0};
  in.output = {"fixed", 1024, 0};
  in.concurrency = 64;
  in.warmup_requests = 128;
  in.requests = 500;
  return in;
}

std::vector<testing::ScriptCommand> Commands(BenchmarkTool tool, const BenchmarkInputs& in,
                                             std::string* text = nullptr) {
  auto file = MakeBenchmark(tool, in);
  EXPECT_TRUE(file.ok()) << file.status().message();
  if (!file.ok()) return {};
  if (text) *text = file->text;
  const auto commands = testing::Commands(file->text);
  const std::map<std::string, const std::set<std::string>*> documented = {
      {"aiperf profile", &kAiperfFlags},
      {"vllm bench serve", &kVllmBenchFlags},
      {"python -m sglang.bench_serving", &kSglangBenchFlags}};
  for (const auto& c : commands) {
    EXPECT_TRUE(documented.contains(c.program)) << c.program;
    if (!documented.contains(c.program)) continue;
    for (const auto& [flag, value] : c.flags) {
      EXPECT_TRUE(documented.at(c.program)->contains(flag)) << c.program << ": " << flag;
    }
  }
  return commands;
}

std::string Flag(const testing::ScriptCommand& c, const std::string& flag) {
  for (const auto& [f, v] : c.flags) {
    if (f == flag) return v;
  }
  return "(absent)";
}

TEST(Benchmark, AiperfClosedLoopAtFixedLengths) {
  const auto c = Commands(BenchmarkTool::kAiperf, Inputs());
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(Flag(c[0], "--synthetic-input-tokens-mean"), "2048");
  EXPECT_EQ(Flag(c[0], "--synthetic-input-tokens-stddev"), "0");
  EXPECT_EQ(Flag(c[0], "--output-tokens-mean"), "1024");
  EXPECT_EQ(Flag(c[0], "--extra-inputs"), "ignore_eos:true");  // every output runs its length
  EXPECT_EQ(Flag(c[0], "--concurrency"), "64");
  EXPECT_EQ(Flag(c[0], "--request-count"), "500");
  EXPECT_EQ(Flag(c[0], "--warmup-request-count"), "128");
  EXPECT_EQ(Flag(c[0], "--request-rate"), "(absent)");
}

TEST(Benchmark, VllmWarmsUpInAFirstUnsavedRun) {
  const auto c = Commands(BenchmarkTool::kVllm, Inputs());
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(Flag(c[0], "--num-prompts"), "128");
  EXPECT_EQ(Flag(c[0], "--save-result"), "(absent)");
  EXPECT_EQ(Flag(c[1], "--num-prompts"), "500");
  EXPECT_NE(Flag(c[1], "--save-result"), "(absent)");
  EXPECT_EQ(Flag(c[1], "--max-concurrency"), "64");
  EXPECT_EQ(Flag(c[1], "--random-range-ratio"), "0");
  EXPECT_NE(Flag(c[1], "--ignore-eos"), "(absent)");
  // The warm-up draws other prompts than the measured run (seed 1 here), whose first prompts
  // vLLM's prefix cache would otherwise serve from the warm-up's.
  EXPECT_EQ(Flag(c[1], "--seed"), "1");
  EXPECT_NE(Flag(c[0], "--seed"), Flag(c[1], "--seed"));
}

TEST(Benchmark, UniformLengthsKeepTheirMeanAndSpread) {
  BenchmarkInputs in = Inputs();
  in.input = {"uniform", 1000, 0.2};
  in.output = {"uniform", 500, 0.2};
  // vLLM: [L (1 - r), L (1 + r)] has mean L and standard deviation 2 r L / sqrt(12) = r L /
  // sqrt(3): CV 0.2 -> r = 0.2 sqrt(3) = 0.3464.
  const auto v = Commands(BenchmarkTool::kVllm, in);
  EXPECT_EQ(Flag(v.back(), "--random-range-ratio"), "0.3464");
  EXPECT_EQ(Flag(v.back(), "--random-input-len"), "1000");
  // SGLang: [rho T, T] has mean T (1 + rho) / 2 and standard deviation T (1 - rho) / sqrt(12).
  const auto s = Commands(BenchmarkTool::kSglang, in);
  ASSERT_EQ(s.size(), 1u);
  const double rho = std::stod(Flag(s[0], "--random-range-ratio"));
  for (const auto& [flag, mean] :
       {std::pair{"--random-input-len", 1000.0}, {"--random-output-len", 500.0}}) {
    const double top = std::stod(Flag(s[0], flag));
    const double drawn_mean = top * (1 + rho) / 2;
    const double drawn_sd = top * (1 - rho) / std::sqrt(12.0);
    EXPECT_NEAR(drawn_mean, mean, 1.0) << flag;
    EXPECT_NEAR(drawn_sd / drawn_mean, 0.2, 0.002) << flag;
  }
  EXPECT_EQ(Flag(s[0], "--warmup-requests"), "128");
  // AIPerf draws normal lengths: the same mean and standard deviation, and a comment.
  std::string text;
  const auto a = Commands(BenchmarkTool::kAiperf, in, &text);
  EXPECT_EQ(Flag(a[0], "--synthetic-input-tokens-stddev"), "200");
  EXPECT_EQ(Flag(a[0], "--output-tokens-stddev"), "100");
  EXPECT_NE(text.find("draws them normally"), std::string::npos);
}

TEST(Benchmark, OpenLoopsAndOffline) {
  BenchmarkInputs in = Inputs();
  in.concurrency.reset();
  in.rate_per_s = 4;
  in.burstiness = 2;  // gap CV 2: gamma shape 1 / 2^2 = 0.25
  const auto v = Commands(BenchmarkTool::kVllm, in);
  EXPECT_EQ(Flag(v.back(), "--request-rate"), "4");
  EXPECT_EQ(Flag(v.back(), "--burstiness"), "0.25");
  EXPECT_EQ(Flag(v.back(), "--max-concurrency"), "(absent)");
  std::string text;
  Commands(BenchmarkTool::kSglang, in, &text);
  EXPECT_NE(text.find("sends Poisson"), std::string::npos);  // no burstiness option
  in.rate_per_s = std::numeric_limits<double>::infinity();
  EXPECT_EQ(Flag(Commands(BenchmarkTool::kSglang, in)[0], "--request-rate"), "inf");
  // AIPerf has no all-at-once mode: every measured request in flight.
  EXPECT_EQ(Flag(Commands(BenchmarkTool::kAiperf, in)[0], "--concurrency"), "500");
}

TEST(Benchmark, PredictedNumbersInTheHeader) {
  BenchmarkInputs in = Inputs();
  in.predicted = {764.0, 765.7, 29.42, 30.01, 2.02, 2068};
  std::string text;
  Commands(BenchmarkTool::kAiperf, in, &text);
  EXPECT_NE(text.find("TTFT p50 764.0 ms, p99 765.7 ms; TPOT p50 29.42 ms, p99 30.01 ms"),
            std::string::npos)
      << text;
  // No steady state given: the figures are the run's alone.
  EXPECT_EQ(text.find("steady state"), std::string::npos) << text;
}

TEST(Benchmark, TheSteadyStateBesideTheRunFromAnIdleServer) {
  BenchmarkInputs in = Inputs();  // a closed loop
  in.predicted = {900.0, 3806.7, 23.25, 23.48, 2.6, 2664};
  in.steady_state = BenchmarkPrediction{426.5, 427.8, 23.25, 23.48, 2.7, 2700};
  std::string text;
  Commands(BenchmarkTool::kAiperf, in, &text);
  EXPECT_NE(text.find("TTFT p50 900.0 ms, p99 3806.7 ms"), std::string::npos) << text;
  EXPECT_NE(text.find("the clients' first burst included; at the steady state the answer "
                      "states:\n# TTFT p50 426.5 ms, p99 427.8 ms; TPOT p50 23.25 ms, p99 23.48 "
                      "ms."),
            std::string::npos)
      << text;
  // An open loop has no burst to name.
  in.concurrency.reset();
  in.rate_per_s = 5;
  Commands(BenchmarkTool::kVllm, in, &text);
  EXPECT_NE(text.find("start from an idle server; at the steady state"), std::string::npos) << text;
  // A run too large to simulate whole keeps the steady state's figures and says so.
  in.steady_state.reset();
  in.too_large_to_simulate = true;
  Commands(BenchmarkTool::kSglang, in, &text);
  EXPECT_NE(text.find("These are the steady state's figures: a run of this many requests is "
                      "too large to simulate whole"),
            std::string::npos)
      << text;
  // An answer whose window had not settled (an open loop the deployment falls behind) says so.
  in.too_large_to_simulate = false;
  in.steady_state = BenchmarkPrediction{426.5, 427.8, 23.25, 23.48, 2.7, 2700};
  in.steady_state_settled = false;
  Commands(BenchmarkTool::kVllm, in, &text);
  EXPECT_NE(text.find("the answer states, over a window that had not settled:"), std::string::npos)
      << text;
}

TEST(Benchmark, BadInput) {
  EXPECT_NE(ParseBenchmarkTool("aiperff").status().message().find("did you mean 'aiperf'"),
            std::string::npos);
  BenchmarkInputs in = Inputs();
  in.input = {"uniform", 1000, 0.6};  // a uniform length of CV 0.6 would need negative lengths
  auto bad = MakeBenchmark(BenchmarkTool::kVllm, in);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().field(), "length_cv");
  EXPECT_TRUE(MakeBenchmark(BenchmarkTool::kAiperf, in).ok());  // normal lengths: any CV
  in = Inputs();
  in.requests = 0;
  EXPECT_FALSE(MakeBenchmark(BenchmarkTool::kSglang, in).ok());
}

}  // namespace
}  // namespace shardwise::emit::bench
