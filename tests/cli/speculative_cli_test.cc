// End-to-end: speculative decoding (--speculative, --spec-tokens, --acceptance) on explain,
// simulate and price, and its bad input.
#include <gtest/gtest.h>

#include "run_binary.h"

namespace shardwise::testing {
namespace {

TEST(SpeculativeCli, MtpOnDeepSeekV3) {
  const RunResult r = RunShardwise(
      "explain --model deepseek-v3 --cluster dgx-h200 --layout tp8 --batch 16 "
      "--speculative mtp --acceptance 0.8,0.6,0.5 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = r.Json();
  // 1 + 0.8 + 0.8 x 0.6 + 0.8 x 0.6 x 0.5 = 2.52 tokens per step.
  EXPECT_NEAR(j["tokens_per_step"].get<double>(), 2.52, 1e-12);
  EXPECT_NEAR(j["speculative"]["tokens_per_step"].get<double>(), 2.52, 1e-12);
  EXPECT_EQ(j["speculative"]["method"], "mtp");
  EXPECT_EQ(j["speculative"]["draft_tokens"], 3);
  EXPECT_GT(j["draft_s"].get<double>(), 0);
  EXPECT_NEAR(j["decode_tpot_s"].get<double>(), j["decode"]["total_s"].get<double>() / 2.52, 1e-12);
  const RunResult text = RunShardwise(
      "explain --model deepseek-v3 --cluster dgx-h200 --layout tp8 --batch 16 "
      "--speculative mtp --acceptance 0.8,0.6,0.5");
  EXPECT_NE(text.out.find("2.520 tokens per step"), std::string::npos) << text.out;
}

TEST(SpeculativeCli, OneMeanForEveryPosition) {
  // --spec-tokens 3 --acceptance 0.7: 1 + 0.7 + 0.49 + 0.343 = 2.533.
  const RunResult r = RunShardwise(
      "explain --model llama-3.1-70b --cluster dgx-h100 --layout tp8 --speculative "
      "draft:llama-3.1-8b --spec-tokens 3 --acceptance 0.7 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = r.Json();
  EXPECT_NEAR(j["tokens_per_step"].get<double>(), 2.533, 1e-12);
  EXPECT_EQ(j["speculative"]["draft_model"], "llama-3.1-8b");
  EXPECT_EQ(j["speculative"]["acceptance"].size(), 3u);
}

TEST(SpeculativeCli, SimulateAndPriceTakeIt) {
  const std::string base = " --model llama-3.1-8b --gpus 1 --layout tp1 --isl 512 --osl 128 --json";
  const std::string spec = " --speculative eagle --spec-tokens 2 --acceptance 0.8";
  const RunResult plain = RunShardwise("simulate --requests 100 --rate 2" + base);
  const RunResult fast = RunShardwise("simulate --requests 100 --rate 2" + base + spec);
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  ASSERT_EQ(fast.exit_code, 0) << fast.err;
  EXPECT_NEAR(fast.Json()["speculative"]["tokens_per_step"].get<double>(), 1 + 0.8 + 0.64, 1e-12);
  EXPECT_LT(fast.Json()["tpot_s"]["mean"].get<double>(),
            plain.Json()["tpot_s"]["mean"].get<double>());
  const RunResult price = RunShardwise("price" + base + spec);
  ASSERT_EQ(price.exit_code, 0) << price.err;
  EXPECT_EQ(price.Json()["speculative"]["method"], "eagle");
}

TEST(SpeculativeCliErrors, BadInput) {
  const std::string e = "explain --model llama-3.1-8b --gpus 1 --layout tp1 ";
  for (const char* a : {"0", "1.5", "-0.2", "0.8,abc", "nan"}) {
    ExpectOneLineError(RunShardwise(e + "--speculative eagle --acceptance " + a), "--acceptance");
  }
  ExpectOneLineError(
      RunShardwise(e + "--speculative eagle --spec-tokens 2 --acceptance 0.8,0.6,0.5"),
      "--spec-tokens is 2");
  ExpectOneLineError(RunShardwise(e + "--acceptance 0.8"), "need --speculative");
  ExpectOneLineError(RunShardwise(e + "--speculative eagle"), "needs --acceptance");
  ExpectOneLineError(RunShardwise(e + "--speculative medusa --acceptance 0.8"), "--speculative");
  ExpectOneLineError(RunShardwise(e + "--speculative draft:gpt2 --acceptance 0.8"), "vocabulary");
  // Llama-3.1-8B's config.json has no num_nextn_predict_layers: no MTP module to draft with
  // (accepted, it had made the model's decode look 40% faster).
  ExpectOneLineError(RunShardwise(e + "--speculative mtp --acceptance 0.8"), "has none");
  ExpectOneLineError(RunShardwise("simulate --speculative mtp --acceptance 0.8"), "has none");
  // A draft that multiplies more parameters per token than the target, or as many, is no
  // draft: Llama-3.1-8B multiplies its 8.03B less the 128,256 x 4,096 = 0.525B input embedding,
  // 7.50B; Llama-3.1-70B about 69.5B.
  ExpectOneLineError(RunShardwise(e + "--speculative draft:llama-3.1-70b --acceptance 0.8"),
                     "a draft must be a smaller model");
  ExpectOneLineError(RunShardwise(e + "--speculative draft:llama-3.1-8b --acceptance 0.8"),
                     "multiplies 7.50B parameters per token, not fewer than llama-3.1-8b's 7.50B");
}

}  // namespace
}  // namespace shardwise::testing
