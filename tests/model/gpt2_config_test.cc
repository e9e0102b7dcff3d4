// GPT-2 style configs (GPT2LMHeadModel), the form Megatron-LM's tables use.
#include <gtest/gtest.h>

#include "shardwise/model/accounting.h"
#include "shardwise/model/catalog.h"
#include "shardwise/model/config_parser.h"

namespace shardwise {
namespace {

TEST(Gpt2Config, PublishedGpt2ParameterCount) {
  // openai-community/gpt2: transformers' num_parameters() = 124,439,808. By hand: wte 50,257 x
  // 768 + wpe 1,024 x 768 = 39,383,808; per layer: ln 2 x 1,536, c_attn 768 x 2,304 + 2,304,
  // c_proj 768 x 768 + 768, c_fc 768 x 3,072 + 3,072, mlp c_proj 3,072 x 768 + 768 = 7,087,872;
  // x 12 = 85,054,464; ln_f 1,536. The LM head is tied to wte.
  auto m = LoadModel("gpt2");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->hidden_size, 768);
  EXPECT_EQ(m->num_layers(), 12);
  EXPECT_EQ(m->intermediate_size, 4 * 768);  // n_inner is absent: 4 x n_embd
  EXPECT_FALSE(m->gated_ffn);
  EXPECT_TRUE(m->tie_word_embeddings);
  const ParamBreakdown p = CountParams(*m);
  EXPECT_EQ(p.total, 124'439'808);
  // Matmul parameters: everything but the position table (a lookup); wte counts as the head.
  EXPECT_EQ(p.active_matmul, 124'439'808 - 1024 * 768);
}

TEST(Gpt2Config, MegatronParameterFormula) {
  // Megatron-LM (arXiv:2104.04473, section 5.1): P = 12 l h^2 (1 + 13 / (12 h) + (V + s) / (12 l
  // h)) for the 1T row (l = 128, h = 25,600, V = 51,200, s = 2,048) = 1.008e12 (Table 1: 1008.0 B).
  // Our count adds only the final LayerNorm's 2h.
  auto m = LoadModel("megatron-gpt-1t");
  ASSERT_TRUE(m.ok()) << m.status().message();
  const double l = 128, h = 25600, v = 51200, s = 2048;
  const double formula = 12 * l * h * h * (1 + 13 / (12 * h) + (v + s) / (12 * l * h));
  EXPECT_NEAR(static_cast<double>(CountParams(*m).total), formula + 2 * h, 1);
  EXPECT_NEAR(formula / 1e9, 1008.0, 0.5);
}

TEST(Gpt2Config, MissingKeyNamesTheGpt2Key) {
  const std::string text =
      R"({"architectures": ["GPT2LMHeadModel"], "n_head": 12, "n_layer": 12,
          "n_positions": 1024, "vocab_size": 50257})";
  auto m = ParseHfConfigText(text, "config.json", "x");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("'n_embd'"), std::string::npos) << m.status().message();
}

}  // namespace
}  // namespace shardwise
