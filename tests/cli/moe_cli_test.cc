// End-to-end: MoE expert placement options (--redundant-experts, --expert-skew) on the commands
// that take a layout, and their bad input.
#include <gtest/gtest.h>

#include <fstream>

#include "run_binary.h"

namespace shardwise::testing {
namespace {

TEST(MoeCli, DeepSeekV3DecodeUnitWithRedundantExperts) {
  // EP144 with 32 redundant experts: (256 + 32) / 144 = 2 expert slots per GPU.
  const RunResult r = RunShardwise(
      "explain --model deepseek-v3 --cluster hgx-h800 --nodes 18 --layout dp144ep144 "
      "--redundant-experts 32 --batch 4608 --context 4096 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = r.Json();
  EXPECT_EQ(j["moe"]["redundant_experts"], 32);
  EXPECT_DOUBLE_EQ(j["moe"]["experts_per_gpu"].get<double>(), 2.0);
  EXPECT_NEAR(j["moe"]["expert_placement_imbalance"].get<double>(), 1.125, 1e-12);
  EXPECT_TRUE(j["moe"]["expert_skew"].is_null());
  const RunResult text = RunShardwise(
      "explain --model deepseek-v3 --cluster hgx-h800 --nodes 18 --layout dp144ep144 "
      "--redundant-experts 32");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("2 per GPU (256 routed + 32 redundant over ep 144)"), std::string::npos)
      << text.out;
}

TEST(MoeCli, SkewRaisesTheEpTimeOnEveryCommand) {
  const std::string base = " --model mixtral-8x7b --cluster dgx-h100 --layout dp8ep8 --json";
  const RunResult even = RunShardwise("explain --batch 256" + base);
  const RunResult skewed = RunShardwise("explain --batch 256 --expert-skew 1" + base);
  ASSERT_EQ(even.exit_code, 0) << even.err;
  ASSERT_EQ(skewed.exit_code, 0) << skewed.err;
  EXPECT_NEAR(skewed.Json()["moe"]["expert_placement_imbalance"].get<double>(), 2240.0 / 761.0,
              1e-9);
  EXPECT_GT(skewed.Json()["decode"]["ep_comm_s"].get<double>(),
            even.Json()["decode"]["ep_comm_s"].get<double>());
  for (const char* command : {"simulate --requests 50", "price", "plan"}) {
    const RunResult r =
        RunShardwise(std::string(command) + " --expert-skew 1 --redundant-experts 8" + base);
    EXPECT_EQ(r.exit_code, 0) << command << ": " << r.err;
  }
}

TEST(MoeCli, SimulateAndPriceNameTheDefaultEpExchange) {
  // plan ranks an EP layout with the exchange its search picks (its why line names it: "EP
  // exchange low-latency, fp8 dispatch"); simulate and price given that layout ran the engines'
  // default, flat NCCL all-to-all in bf16, and said nothing of it: their figures differed from
  // plan's with no word why. Now they say it, unless an EP flag chose the exchange.
  const std::string base = " --model mixtral-8x7b --cluster dgx-h100 --layout dp8ep8 --json";
  const std::string note =
      "EP exchange flat (NCCL all-to-all) with bf16 dispatch, the engines' "
      "default; plan and recommend also try";
  for (const char* command : {"simulate --requests 50", "price"}) {
    const RunResult flat = RunShardwise(std::string(command) + base);
    ASSERT_EQ(flat.exit_code, 0) << command << ": " << flat.err;
    const nlohmann::json notes = flat.Json()["notes"];
    bool said = false;
    for (const auto& n : notes) {
      said |= n.get<std::string>().find(note) != std::string::npos;
    }
    EXPECT_TRUE(said) << command << ": " << notes;
    const RunResult chosen = RunShardwise(std::string(command) + base + " --ep-algorithm auto");
    ASSERT_EQ(chosen.exit_code, 0) << command << ": " << chosen.err;
    EXPECT_EQ(chosen.err.find("EP exchange flat"), std::string::npos) << chosen.err;
  }
  // A layout without EP has no exchange to name; an expert-TP layout gathers tokens instead.
  const RunResult dense = RunShardwise(
      "simulate --requests 50 --model mixtral-8x7b --cluster dgx-h100 --layout tp8 --json");
  ASSERT_EQ(dense.exit_code, 0) << dense.err;
  EXPECT_EQ(dense.err.find("EP exchange"), std::string::npos) << dense.err;
  const RunResult etp = RunShardwise(
      "simulate --requests 50 --model qwen3-30b-a3b --cluster dgx-h100 --layout dp8ep4etp2");
  ASSERT_EQ(etp.exit_code, 0) << etp.err;
  EXPECT_EQ(etp.err.find("EP exchange"), std::string::npos) << etp.err;
  // plan's saved deployment runs the exchange plan picked, which the note must not deny.
  const std::string dir = ::testing::TempDir();
  const RunResult plan =
      RunShardwise("plan --model qwen3-30b-a3b --cluster dgx-h100 --nodes 2 --rate 20 --json");
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  // (Its decode pool's exchange is plan's pick, not the default the note names.)
  const nlohmann::json ep = plan.Json()["deployment"]["pools"][1]["engine_settings"]["ep_exchange"];
  ASSERT_NE(ep["dispatch_dtype"], "bf16") << ep;
  std::ofstream(dir + "/moe_plan.json") << plan.out;
  for (const char* command : {"simulate --requests 50", "price"}) {
    const RunResult replay =
        RunShardwise(std::string(command) + " --deployment " + dir + "/moe_plan.json --json");
    ASSERT_EQ(replay.exit_code, 0) << command << ": " << replay.err;
    EXPECT_EQ(replay.err.find("EP exchange flat"), std::string::npos)
        << command << ": " << replay.err;
  }
}

TEST(MoeCliErrors, BadPlacementInput) {
  const std::string v3 = "explain --model deepseek-v3 --cluster hgx-h800 --nodes 18 ";
  ExpectOneLineError(RunShardwise(v3 + "--layout dp144ep144"), "--redundant-experts");
  ExpectOneLineError(RunShardwise(v3 + "--layout dp144ep144 --redundant-experts 31"),
                     "must divide by ep (144)");
  ExpectOneLineError(RunShardwise("explain --model mixtral-8x7b --layout dp8ep8 "
                                  "--redundant-experts -8"),
                     "--redundant-experts");
  ExpectOneLineError(RunShardwise("explain --model mixtral-8x7b --layout tp8 "
                                  "--redundant-experts 8"),
                     "ep > 1");
  ExpectOneLineError(RunShardwise("explain --model llama-3.1-8b --layout tp1 "
                                  "--redundant-experts 8"),
                     "mixture-of-experts");
  // The routing options of a mixture-of-experts model, given for a dense one, had been ignored.
  for (const char* option : {"--expert-imbalance 2", "--expert-skew 1", "--capacity-factor 1.25"}) {
    ExpectOneLineError(RunShardwise(std::string("simulate --model llama-3.1-8b ") + option),
                       "needs a mixture-of-experts model; llama-3.1-8b is dense");
  }
  for (const char* skew : {"nan", "-1", "inf"}) {
    ExpectOneLineError(RunShardwise(std::string("explain --model mixtral-8x7b --layout dp8ep8 "
                                                "--expert-skew ") +
                                    skew),
                       "--expert-skew");
  }
}

}  // namespace
}  // namespace shardwise::testing
