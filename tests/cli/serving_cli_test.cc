// End-to-end: `simulate` and `price` as a user runs them, and their bad input.
#include <gtest/gtest.h>

#include "run_binary.h"

namespace shardwise::testing {
namespace {

TEST(SimulateCli, DefaultsRun) {
  const RunResult r = RunShardwise("simulate");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* text : {"TTFT", "TPOT", "ITL", "goodput", "MFU", "per million output tokens"}) {
    EXPECT_NE(r.out.find(text), std::string::npos) << text;
  }
}

TEST(SimulateCli, JsonFieldsAndDeterminism) {
  const std::string args =
      "simulate --model llama-3.1-8b --gpus 2 --layout dp2 --rate 30 --burstiness 2 --isl-dist "
      "lognormal --osl-dist uniform --requests 400 --seed 11 --json";
  const RunResult a = RunShardwise(args);
  const RunResult b = RunShardwise(args);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(a.out, b.out);  // same seed, identical JSON
  const auto j = a.Json();
  for (const char* key : {"output_tokens_per_s", "ttft_p50_s", "ttft_p99_s", "tpot_p50_s",
                          "tpot_p99_s", "utilization", "mfu", "usd_per_mtok_output"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_EQ(j["requests"], 400);
  const RunResult other = RunShardwise(
      "simulate --model llama-3.1-8b --gpus 2 --layout dp2 --rate 30 --burstiness 2 --isl-dist "
      "lognormal --osl-dist uniform --requests 400 --seed 12 --json");
  EXPECT_NE(a.out, other.out);
}

TEST(SimulateCli, TraceFile) {
  std::system("printf 'arrival_s,input_tokens,output_tokens\\n0.0,500,50\\n0.1,800,20\\n0.1,100,5\\n' "
              "> /tmp/shardwise_trace.csv");
  const RunResult r = RunShardwise("simulate --gpus 1 --layout tp1 --trace /tmp/shardwise_trace.csv --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.Json()["requests"], 3);
}

TEST(SimulateCliErrors, BadInput) {
  std::system("printf '0.0,500,50\\n0.2,-8,20\\n' > /tmp/shardwise_neg.csv");
  ExpectOneLineError(RunShardwise("simulate --trace /tmp/shardwise_neg.csv"),
                     "token counts must be whole numbers from 1 to");
  std::system("printf '0.5,500,50\\n0.2,8,20\\n' > /tmp/shardwise_unsorted.csv");
  ExpectOneLineError(RunShardwise("simulate --trace /tmp/shardwise_unsorted.csv"),
                     "arrival times must not decrease");
  ExpectOneLineError(RunShardwise("simulate --rate 0"), "--rate '0' must be a positive number");
  ExpectOneLineError(RunShardwise("simulate --rate fast"), "--rate 'fast'");
  ExpectOneLineError(RunShardwise("simulate --model llama-3.1-70b --gpus 1 --layout tp1"),
                     "does not fit");
  ExpectOneLineError(RunShardwise("simulate --router random"), "unknown router 'random'");
  ExpectOneLineError(RunShardwise("simulate --isl-dist zipf"), "unknown length distribution");
  ExpectOneLineError(RunShardwise("simulate --trace /nonexistent.csv"), "cannot open file");
}

TEST(PriceCli, Seed003DutyCycleAndBreakEven) {
  const RunResult r = RunShardwise(
      "price --model llama-3.1-70b --layout tp4 --duty-cycle 0.4 --api-usd-per-mtok 0.9 "
      "--demand-tokens-per-s 20000 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = r.Json();
  EXPECT_DOUBLE_EQ(j["duty_cycle_multiplier"].get<double>(), 2.5);  // seed 003: 40% -> ~2.5x
  EXPECT_NEAR(j["usd_per_mtok_output_at_duty_cycle"].get<double>() /
                  j["usd_per_mtok_output"].get<double>(),
              2.5, 1e-9);
  EXPECT_NEAR(j["break_even_utilization"].get<double>(),
              j["usd_per_mtok_output"].get<double>() / 0.9, 1e-9);
  EXPECT_GT(j["demand"]["gpus"].get<int>(), 0);
  EXPECT_EQ(j["curve"].size(), 10u);
}

TEST(PriceCliErrors, BadInput) {
  ExpectOneLineError(RunShardwise("price --duty-cycle 0"), "--duty-cycle must be in (0, 1]");
  ExpectOneLineError(RunShardwise("price --usd-per-gpu-hour -3"), "--usd-per-gpu-hour");
  ExpectOneLineError(RunShardwise("price --layout tp8pp4"), "needs 32 GPUs");
}

}  // namespace
}  // namespace shardwise::testing
