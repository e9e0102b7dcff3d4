// RoPE frequencies for every rope_scaling type, against hand calculations from the published
// formulas (the papers and model cards named in rope.h), and the parse of the published
// configs that use them.
#include "shardwise/runtime/rope.h"

#include <gtest/gtest.h>

#include <cmath>

#include "shardwise/model/catalog.h"
#include "shardwise/model/config_parser.h"
#include "shardwise/runtime/kernels.h"

namespace shardwise {
namespace {

constexpr double kPi = 3.14159265358979323846;

ModelSpec WithScaling(const std::string& scaling_json, int64_t max_positions = 8) {
  const std::string text = R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 64,
    "num_attention_heads": 4, "num_hidden_layers": 1, "vocab_size": 16, "intermediate_size": 32,
    "rope_theta": 10000.0, "max_position_embeddings": )" +
                           std::to_string(max_positions) + R"(, "rope_scaling": )" + scaling_json +
                           "}";
  auto m = ParseHfConfigText(text, "config.json", "t");
  EXPECT_TRUE(m.ok()) << m.status().message();
  return m.value();
}

TEST(Rope, PlainAndLinear) {
  // dim 4, theta 10^4: theta^(-0/4) = 1 and theta^(-2/4) = 0.01; linear factor 2 halves both.
  const RopeFrequencies plain = ComputeRopeFrequencies(WithScaling("null"), 4, 1);
  EXPECT_DOUBLE_EQ(plain.inv_freq[0], 1.0);
  EXPECT_NEAR(plain.inv_freq[1], 0.01, 1e-15);
  EXPECT_EQ(plain.attention_factor, 1.0);
  const RopeFrequencies linear =
      ComputeRopeFrequencies(WithScaling(R"({"type": "linear", "factor": 2.0})"), 4, 1);
  EXPECT_DOUBLE_EQ(linear.inv_freq[0], 0.5);
  EXPECT_NEAR(linear.inv_freq[1], 0.005, 1e-15);
}

TEST(Rope, DynamicGrowsTheBaseOnlyPastTheTrainedContext) {
  const ModelSpec m = WithScaling(R"({"type": "dynamic", "factor": 2.0})", 8);
  // seq_len 8 <= 8: plain. seq_len 16: base = 10^4 (2 * 16 / 8 - 1)^(4 / 2) = 9 x 10^4, so the
  // second frequency is (9 x 10^4)^(-1/2) = 1/300.
  EXPECT_NEAR(ComputeRopeFrequencies(m, 4, 8).inv_freq[1], 0.01, 1e-15);
  EXPECT_NEAR(ComputeRopeFrequencies(m, 4, 16).inv_freq[1], 1.0 / 300.0, 1e-15);
  EXPECT_DOUBLE_EQ(ComputeRopeFrequencies(m, 4, 16).inv_freq[0], 1.0);
}

TEST(Rope, Llama3OnTheLlama31Config) {
  // Llama 3.1: theta 5 x 10^5, head_dim 128, factor 8, low 1, high 4, trained on 8,192 tokens:
  // wavelengths under 8192 / 4 = 2048 stay, over 8192 are divided by 8, in between blended.
  const ModelSpec m = LoadModel("llama-3.1-8b").value();
  ASSERT_EQ(m.rope_scaling.type, "llama3");
  const RopeFrequencies f = ComputeRopeFrequencies(m, 128, 1);
  auto plain = [](int i) { return std::pow(500000.0, -2.0 * i / 128.0); };
  EXPECT_DOUBLE_EQ(f.inv_freq[0], 1.0);         // wavelength 2 pi
  EXPECT_DOUBLE_EQ(f.inv_freq[20], plain(20));  // wavelength 2 pi / 0.0167 = 376
  EXPECT_DOUBLE_EQ(f.inv_freq[63], plain(63) / 8);
  // i = 30: inv = exp(-ln(5e5) 60 / 128) = 0.002131, wavelength 2948.5 tokens; smooth =
  // (8192 / 2948.5 - 1) / (4 - 1) = 0.5928, so inv x ((1 - 0.5928) / 8 + 0.5928) = inv x 0.6437.
  EXPECT_NEAR(f.inv_freq[30] / plain(30), 0.6437, 1e-4);
  EXPECT_EQ(f.attention_factor, 1.0);
}

TEST(Rope, YarnOnTheDeepseekV3Config) {
  // DeepSeek-V3: rope dims 64, theta 10^4, factor 40, 4,096 trained tokens, beta 32 / 1.
  // Correction dims: 64 ln(4096 / (32 x 2 pi)) / (2 ln 10^4) = 10.47 -> 10 and
  // 64 ln(4096 / (2 pi)) / (2 ln 10^4) = 22.51 -> 23: pairs up to 10 keep their frequency,
  // pairs from 23 on are divided by 40, and pair 16 is (16 - 10) / 13 of the way.
  const ModelSpec m = LoadModel("deepseek-v3").value();
  ASSERT_EQ(m.rope_scaling.type, "yarn");
  const RopeFrequencies f = ComputeRopeFrequencies(m, 64, 1);
  auto plain = [](int i) { return std::pow(10000.0, -2.0 * i / 64.0); };
  EXPECT_DOUBLE_EQ(f.inv_freq[10], plain(10));
  EXPECT_DOUBLE_EQ(f.inv_freq[23], plain(23) / 40);
  const double ramp = 6.0 / 13.0;
  EXPECT_NEAR(f.inv_freq[16], plain(16) * (ramp / 40 + (1 - ramp)), 1e-15);
  // mscale = mscale_all_dim = 1: the cos/sin factor is their ratio, 1.
  EXPECT_DOUBLE_EQ(f.attention_factor, 1.0);
}

TEST(Rope, YarnOnTheGptOssConfig) {
  // gpt-oss: factor 32, no mscale, so cos and sin scale by 0.1 ln 32 + 1 = 1.34657; truncate
  // false keeps the correction range fractional: 64 ln(4096 / (32 x 2 pi)) / (2 ln 150000) =
  // 8.093 to 64 ln(4096 / (2 pi)) / (2 ln 150000) = 17.398.
  const ModelSpec m = LoadModel("gpt-oss-20b").value();
  ASSERT_EQ(m.rope_scaling.type, "yarn");
  EXPECT_FALSE(m.rope_scaling.truncate);
  const RopeFrequencies f = ComputeRopeFrequencies(m, 64, 1);
  EXPECT_NEAR(f.attention_factor, 1.346574, 1e-6);
  const double low = 64 * std::log(4096 / (32 * 2 * kPi)) / (2 * std::log(150000.0));
  const double high = 64 * std::log(4096 / (2 * kPi)) / (2 * std::log(150000.0));
  EXPECT_NEAR(low, 8.093, 1e-3);
  EXPECT_NEAR(high, 17.398, 1e-3);
  const double plain12 = std::pow(150000.0, -24.0 / 64.0), ramp = (12 - low) / (high - low);
  EXPECT_NEAR(f.inv_freq[12], plain12 * (ramp / 32 + (1 - ramp)), 1e-15);
}

TEST(Rope, UnknownTypeIsRefusedByName) {
  const ModelSpec m = WithScaling(R"({"rope_type": "longrope", "factor": 4.0})");
  const Status s = CheckRopeScaling(m);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("'longrope'"), std::string::npos) << s.message();
  EXPECT_TRUE(CheckRopeScaling(WithScaling(R"({"rope_type": "default"})")).ok());
}

TEST(Rope, MalformedScalingIsAParseError) {
  const std::string base = R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 64,
    "num_attention_heads": 4, "num_hidden_layers": 1, "vocab_size": 16, "intermediate_size": 32,
    "rope_scaling": )";
  EXPECT_FALSE(
      ParseHfConfigText(base + R"({"rope_type": "linear"}})", "c", "t").ok());  // no factor
  EXPECT_FALSE(ParseHfConfigText(base + R"("yarn"})", "c", "t").ok());
  EXPECT_FALSE(ParseHfConfigText(base + R"({"factor": 2.0}})", "c", "t").ok());  // no type
}

TEST(Rope, KernelRotatesHalvesOrInterleavedPairs) {
  // One pair at angle pi/2 (inv_freq 1, position pi/2 is not an integer, so use inv_freq pi/2
  // at position 1): (a, b) -> (-b, a), scaled by 2.
  const double inv[1] = {kPi / 2};
  float halves[2] = {1.0f, 3.0f};
  kernels::Rope(halves, 1, 2, 2, 1, inv, 2.0, false);
  EXPECT_NEAR(halves[0], -6.0f, 1e-6);
  EXPECT_NEAR(halves[1], 2.0f, 1e-6);
  // dim 4, second pair untouched at inv_freq 0: halves pair (0, 2), interleaved pair (0, 1).
  const double inv2[2] = {kPi / 2, 0.0};
  float h[4] = {1, 2, 3, 4}, il[4] = {1, 2, 3, 4};
  kernels::Rope(h, 1, 4, 4, 1, inv2, 1.0, false);
  kernels::Rope(il, 1, 4, 4, 1, inv2, 1.0, true);
  EXPECT_NEAR(h[0], -3.0f, 1e-6);
  EXPECT_NEAR(h[2], 1.0f, 1e-6);
  EXPECT_NEAR(il[0], -2.0f, 1e-6);
  EXPECT_NEAR(il[1], 1.0f, 1e-6);
  EXPECT_NEAR(il[2], 3.0f, 1e-6);
}

}  // namespace
}  // namespace shardwise
