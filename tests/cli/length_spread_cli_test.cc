// End-to-end: plan, recommend and price draw request lengths as simulate does when the lengths
// spread (--isl-dist, --osl-dist, --length-cv), so a decision made for variable lengths is the
// one simulate confirms; the saved answer replays the same spread. simulate is the independent
// side: it builds its scenario from its own flags.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "run_binary.h"

namespace shardwise::testing {
namespace {

const std::string kSetup = "--model llama-3.1-8b --gpus 8 --concurrency 32 ";
const std::string kSpread = " --osl-dist lognormal --length-cv 0.5";

TEST(LengthSpreadCli, PlanSimulatesTheSpreadAsSimulateDoes) {
  const RunResult plan =
      RunShardwise("plan " + kSetup + "--layout tp4pp2 --disagg off --top 1 --json" + kSpread);
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  const auto p = plan.Json();
  EXPECT_EQ(p["lengths"]["output_distribution"], "lognormal");
  EXPECT_EQ(p["lengths"]["input_distribution"], "fixed");
  EXPECT_EQ(p["lengths"]["length_cv"].get<double>(), 0.5);
  const auto& row = p["layouts"][0];
  const RunResult sim = RunShardwise("simulate " + kSetup + "--layout tp4pp2 --json" + kSpread);
  ASSERT_EQ(sim.exit_code, 0) << sim.err;
  const auto s = sim.Json();
  // The same deployment, load and lengths: the same simulation.
  EXPECT_DOUBLE_EQ(row["ttft_s"]["mean"].get<double>(), s["ttft_s"]["mean"].get<double>());
  EXPECT_DOUBLE_EQ(row["tpot_s"]["mean"].get<double>(), s["tpot_s"]["mean"].get<double>());
  EXPECT_DOUBLE_EQ(row["ttft_s"]["p99"].get<double>(), s["ttft_s"]["p99"].get<double>());
  // And not the fixed-length loop's: the spread reached the simulation.
  const RunResult fixed =
      RunShardwise("plan " + kSetup + "--layout tp4pp2 --disagg off --top 1 --json");
  ASSERT_EQ(fixed.exit_code, 0) << fixed.err;
  EXPECT_NE(fixed.Json()["layouts"][0]["ttft_s"]["mean"].get<double>(),
            row["ttft_s"]["mean"].get<double>());
  EXPECT_EQ(fixed.Json()["lengths"]["length_cv"], nullptr);
  // The saved answer replays the spread.
  const std::string file = ::testing::TempDir() + "/spread_plan.json";
  std::ofstream(file) << plan.out;
  const RunResult replay = RunShardwise("simulate --json --deployment " + file);
  ASSERT_EQ(replay.exit_code, 0) << replay.err;
  EXPECT_EQ(replay.Json()["lengths"]["output_distribution"], "lognormal");
  EXPECT_DOUBLE_EQ(replay.Json()["ttft_s"]["mean"].get<double>(),
                   row["ttft_s"]["mean"].get<double>());
  // The header says how the lengths spread.
  const RunResult text =
      RunShardwise("plan " + kSetup + "--layout tp4pp2 --disagg off --top 1" + kSpread);
  EXPECT_NE(text.out.find("ISL 1024 / OSL 256 (fixed / lognormal, CV 0.5)"), std::string::npos)
      << text.out;
}

TEST(LengthSpreadCli, PriceAndRecommendDrawTheSpread) {
  const std::string at = "--model llama-3.1-8b --gpus 8 --layout tp1 --concurrency 16";
  const std::string spread = " --osl-dist uniform --length-cv 0.2 --json";
  const RunResult price = RunShardwise("price " + at + spread);
  ASSERT_EQ(price.exit_code, 0) << price.err;
  const RunResult sim = RunShardwise("simulate " + at + spread);
  ASSERT_EQ(sim.exit_code, 0) << sim.err;
  const auto point = price.Json()["operating_point"]["point"];
  EXPECT_DOUBLE_EQ(point["ttft_s"]["mean"].get<double>(),
                   sim.Json()["ttft_s"]["mean"].get<double>());
  EXPECT_DOUBLE_EQ(point["tpot_s"]["mean"].get<double>(),
                   sim.Json()["tpot_s"]["mean"].get<double>());
  EXPECT_EQ(price.Json()["lengths"]["output_distribution"], "uniform");
  EXPECT_EQ(price.Json()["deployment"]["saved"]["workload"]["osl_dist"], "uniform");
  // A saved simulate's spread is its workload's: price at another load draws it too.
  const std::string file = ::testing::TempDir() + "/spread_sim.json";
  std::ofstream(file) << sim.out;
  const RunResult other = RunShardwise("price --rate 4 --json --deployment " + file);
  ASSERT_EQ(other.exit_code, 0) << other.err;
  EXPECT_EQ(other.Json()["lengths"]["output_distribution"], "uniform");
  EXPECT_EQ(other.Json()["lengths"]["length_cv"].get<double>(), 0.2);
  const RunResult rec = RunShardwise(
      "recommend --model llama-3.1-8b --cluster dgx-h100 --rate 20 --max-ttft-ms 500 "
      "--max-tpot-ms 30 --osl-dist lognormal --json");
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  EXPECT_EQ(rec.Json()["lengths"]["output_distribution"], "lognormal");
  EXPECT_EQ(rec.Json()["lengths"]["length_cv"].get<double>(), 0.5);  // simulate's default CV
  EXPECT_EQ(rec.Json()["deployment"]["saved"]["workload"]["osl_dist"], "lognormal");
  // Its answer is what simulate of the saved deployment at that rate and spread gives.
  const std::string rec_file = ::testing::TempDir() + "/spread_rec.json";
  std::ofstream(rec_file) << rec.out;
  const RunResult check = RunShardwise("simulate --json --deployment " + rec_file);
  ASSERT_EQ(check.exit_code, 0) << check.err;
  EXPECT_DOUBLE_EQ(rec.Json()["recommendation"]["ttft_s"]["p99"].get<double>(),
                   check.Json()["ttft_s"]["p99"].get<double>());
  EXPECT_DOUBLE_EQ(rec.Json()["recommendation"]["tpot_s"]["mean"].get<double>(),
                   check.Json()["tpot_s"]["mean"].get<double>());
}

TEST(LengthSpreadCli, PriceStartsFromPlansAnswerForTheSpread) {
  // No load and no SLOs: price takes plan's operating point of the layout (its best batch)...
  const std::string spread = " --osl-dist lognormal --json";
  const RunResult price = RunShardwise("price --model llama-3.1-8b --gpus 8 --layout tp1" + spread);
  ASSERT_EQ(price.exit_code, 0) << price.err;
  const RunResult plan =
      RunShardwise("plan --model llama-3.1-8b --gpus 8 --layout tp1 --disagg off" + spread);
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  const nlohmann::json point = price.Json()["operating_point"];
  const nlohmann::json row = plan.Json()["layouts"][0];
  EXPECT_EQ(point["priced_at"], "best_batch");
  EXPECT_EQ(point["point"]["concurrency"], row["concurrency"]);
  EXPECT_DOUBLE_EQ(point["point"]["ttft_s"]["mean"].get<double>(),
                   row["ttft_s"]["mean"].get<double>());
  // ...and without --layout, plan's first for the same spread (lognormal outputs at CV 1 rank
  // another first than fixed lengths do on this node).
  const std::string wide = " --model llama-3.1-70b --gpus 8 --osl-dist lognormal --length-cv 1";
  const RunResult chosen = RunShardwise("price --json" + wide);
  ASSERT_EQ(chosen.exit_code, 0) << chosen.err;
  const RunResult first = RunShardwise("plan --disagg off --json" + wide);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_EQ(chosen.Json()["layout"], first.Json()["layouts"][0]["layout"]);
}

TEST(LengthSpreadCli, ASpreadTheLoadCannotRunIsSaidNotHidden) {
  // Prompts spread as a lognormal of CV 1 draw one that two H100s' KV cannot hold beside
  // Llama-3.1-70B's weights: the layout is dropped, and with none left the error names it.
  ExpectOneLineError(RunShardwise("plan --model llama-3.1-70b --gpus 2 --isl 6000 --isl-dist "
                                  "lognormal --length-cv 1 --concurrency 16 --disagg off"),
                     "can run this load: tp2: a request of");
  // With one layout left out and others ranked, a note names it and why.
  const RunResult some = RunShardwise(
      "plan --model llama-3.1-70b --gpus 4 --isl 6000 --isl-dist lognormal --length-cv 1 "
      "--concurrency 16 --disagg off --top 10");
  ASSERT_EQ(some.exit_code, 0) << some.err;
  EXPECT_NE(some.err.find("not ranked, it cannot run this load: dp2tp2: a request of"),
            std::string::npos)
      << some.err;
  // A layout whose run of so wide a spread measured no request (the longest draws held its
  // window open) is never ranked with latencies of zero: it drops out with a note, and every
  // layout ranked measured its requests. (Without SLOs: a window judged against them is sized
  // for their percentile, 10,000 requests for p99, and there every layout here measures.)
  const RunResult wide = RunShardwise(
      "plan --model llama-3.1-70b --gpus 8 --isl 2048 --osl 256 --isl-dist lognormal --osl-dist "
      "lognormal --length-cv 2 --disagg off --json");
  ASSERT_EQ(wide.exit_code, 0) << wide.err;
  EXPECT_NE(wide.err.find("no request finished in the measured window"), std::string::npos)
      << wide.err;
  const nlohmann::json ranked = wide.Json()["layouts"];
  ASSERT_FALSE(ranked.empty());
  for (const auto& l : ranked) {
    EXPECT_GT(l["requests_simulated"].get<int64_t>(), 0) << l["layout"];
    EXPECT_GT(l["ttft_s"]["p99"].get<double>(), 0) << l["layout"];
  }
}

TEST(LengthSpreadCli, ReplaysTakeTheSpreadGivenOverTheSaved) {
  const std::string file = ::testing::TempDir() + "/spread_price.json";
  const RunResult saved = RunShardwise(
      "price --model llama-3.1-8b --gpus 8 --layout tp1 --concurrency 16 --isl-dist uniform "
      "--length-cv 0.2 --json");
  ASSERT_EQ(saved.exit_code, 0) << saved.err;
  std::ofstream(file) << saved.out;
  // Back to fixed prompts: the saved CV is not kept for a distribution given here.
  const RunResult fixed = RunShardwise("simulate --json --isl-dist fixed --deployment " + file);
  ASSERT_EQ(fixed.exit_code, 0) << fixed.err;
  EXPECT_EQ(fixed.Json()["lengths"]["input_distribution"], "fixed");
  EXPECT_EQ(fixed.Json()["lengths"]["length_cv"], nullptr);
  // A prompt-only spread leaves the fixed outputs' lockstep: plan reports both phases, as
  // simulate does.
  const std::string loop =
      "--model llama-3.1-8b --gpus 8 --layout tp1 --concurrency 16 --isl-dist uniform "
      "--length-cv 0.2 --json";
  const RunResult plan = RunShardwise("plan --disagg off " + loop);
  const RunResult sim = RunShardwise("simulate " + loop);
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  ASSERT_EQ(sim.exit_code, 0) << sim.err;
  EXPECT_FALSE(plan.Json()["layouts"][0]["client_phase"].is_null());
  EXPECT_FALSE(sim.Json()["client_phase"].is_null());
}

TEST(LengthSpreadCli, BadSpreadIsOneLine) {
  for (const std::string command :
       {"plan", "price", "recommend --max-ttft-ms 1000 --max-tpot-ms 50", "simulate"}) {
    SCOPED_TRACE(command);
    ExpectOneLineError(RunShardwise(command + " --length-cv 0.3"),
                       "--length-cv spreads uniform or lognormal lengths: set --osl-dist");
    ExpectOneLineError(RunShardwise(command + " --osl-dist gaussian"),
                       "unknown length distribution 'gaussian'");
    ExpectOneLineError(RunShardwise(command + " --isl-dist uniform --length-cv 11"),
                       "--length-cv must be in [0, 10]");
    ExpectOneLineError(RunShardwise(command + " --isl-dist uniform --length-cv 0.6"),
                       "--length-cv 0.6 is beyond a uniform length's largest, 0.577");
  }
}

}  // namespace
}  // namespace shardwise::testing
