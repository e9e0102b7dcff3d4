// config.json parsing: architecture features, and one-line errors for bad input.
#include "shardwise/model/config_parser.h"

#include <gtest/gtest.h>

#include "load_model.h"
#include "shardwise/model/catalog.h"

namespace shardwise {
namespace {

using testing::Load;

TEST(ConfigParser, EveryBuiltinModelParses) {
  auto models = LoadBuiltinModels();
  ASSERT_TRUE(models.ok()) << models.status().message();
  EXPECT_GE(models->size(), 16u);
}

TEST(ConfigParser, DeepseekV3Features) {
  const ModelSpec m = Load("deepseek-v3");
  EXPECT_EQ(m.attention, AttentionKind::kMla);
  ASSERT_TRUE(m.mla.has_value());
  EXPECT_EQ(m.mla->kv_lora_rank, 512);
  EXPECT_EQ(m.num_moe_layers(), 61 - 3);  // first_k_dense_replace = 3
  EXPECT_FALSE(m.layers[2].moe());
  EXPECT_TRUE(m.layers[3].moe());
  EXPECT_EQ(m.moe.num_shared_experts, 1);
  EXPECT_EQ(m.moe.num_groups, 8);
  EXPECT_EQ(m.moe.groups_per_token, 4);
  EXPECT_TRUE(m.moe.router_score_bias);  // noaux_tc
  EXPECT_EQ(m.native_dtype, Dtype::kFp8);
}

TEST(ConfigParser, GptOssFeatures) {
  const ModelSpec m = Load("gpt-oss-20b");
  EXPECT_TRUE(m.attention_sinks);
  EXPECT_EQ(m.layers[0].sliding_window, 128);
  EXPECT_EQ(m.layers[1].sliding_window, 0);
  EXPECT_EQ(m.moe.experts_per_token, 4);
  EXPECT_EQ(m.native_dtype, Dtype::kMxfp4);
}

TEST(ConfigParser, AttentionKinds) {
  EXPECT_EQ(Load("llama-2-7b").attention, AttentionKind::kMha);
  EXPECT_EQ(Load("llama-3.1-8b").attention, AttentionKind::kGqa);
  EXPECT_EQ(Load("qwen3-30b-a3b").qk_norm, QkNorm::kPerHead);
  EXPECT_TRUE(Load("qwen2.5-72b").qkv_bias);
  EXPECT_EQ(Load("tiny-moe").moe.num_shared_experts, 1);
}

TEST(ConfigParser, MqaAndMistralWindow) {
  const std::string text = R"({"architectures": ["MistralForCausalLM"], "hidden_size": 64,
    "num_attention_heads": 4, "num_key_value_heads": 1, "num_hidden_layers": 2,
    "vocab_size": 100, "intermediate_size": 128, "sliding_window": 4096})";
  auto m = ParseHfConfigText(text, "mistral.json", "m");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->attention, AttentionKind::kMqa);
  EXPECT_EQ(m->layers[1].sliding_window, 4096);
}

std::string ErrorOf(const std::string& text) {
  auto m = ParseHfConfigText(text, "config.json", "x");
  EXPECT_FALSE(m.ok());
  return m.ok() ? "" : m.status().message();
}

TEST(ConfigParserErrors, NotJson) {
  const std::string e = ErrorOf("{ not json");
  EXPECT_NE(e.find("config.json: not valid JSON"), std::string::npos) << e;
  EXPECT_NE(e.find("line 1"), std::string::npos) << e;
}

TEST(ConfigParserErrors, MissingKeyNamesFileAndKey) {
  const std::string e = ErrorOf(R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 64,
      "num_attention_heads": 4, "vocab_size": 10, "intermediate_size": 8})");
  EXPECT_EQ(e, "config.json: required key 'num_hidden_layers' is missing");
}

TEST(ConfigParserErrors, UnknownArchitectureListsSupported) {
  const std::string e = ErrorOf(R"({"architectures": ["T5ForConditionalGeneration"]})");
  EXPECT_NE(e.find("'T5ForConditionalGeneration' is not supported"), std::string::npos) << e;
  EXPECT_NE(e.find("DeepseekV3ForCausalLM"), std::string::npos) << e;
  EXPECT_NE(e.find("GptOssForCausalLM"), std::string::npos) << e;
}

TEST(ConfigParserErrors, KvHeadsMustDivideHeads) {
  const std::string e = ErrorOf(R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 64,
      "num_attention_heads": 32, "num_key_value_heads": 6, "num_hidden_layers": 2,
      "vocab_size": 10, "intermediate_size": 8})");
  EXPECT_EQ(e, "config.json: num_key_value_heads (6) must divide num_attention_heads (32)");
}

TEST(ConfigParserErrors, NonPositiveAndWrongTypes) {
  EXPECT_EQ(ErrorOf(R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 0})"),
            "config.json: 'hidden_size' must be positive, got 0");
  EXPECT_EQ(ErrorOf(R"({"architectures": ["LlamaForCausalLM"], "hidden_size": "big"})"),
            "config.json: 'hidden_size' must be an integer, got \"big\"");
  EXPECT_EQ(ErrorOf(R"({"architectures": ["LlamaForCausalLM"], "hidden_size": -4})"),
            "config.json: 'hidden_size' must not be negative, got -4");
}

TEST(ConfigParserErrors, TopKAboveExperts) {
  const std::string e = ErrorOf(R"({"architectures": ["MixtralForCausalLM"], "hidden_size": 64,
      "num_attention_heads": 4, "num_hidden_layers": 2, "vocab_size": 10,
      "intermediate_size": 8, "num_local_experts": 4, "num_experts_per_tok": 5})");
  EXPECT_EQ(e, "config.json: experts per token (5) exceeds the number of experts (4)");
}

TEST(ConfigParser, WrappersReadTheLanguageModel) {
  // Kimi-K2.5, Llama 4 and Qwen3.5 keep the language model under text_config.
  for (const char* name : {"kimi-k2.5", "llama-4-maverick", "qwen3.5-397b-a17b"}) {
    const ModelSpec m = Load(name);
    ASSERT_FALSE(m.notes.empty()) << name;
    EXPECT_NE(m.notes.back().find("vision tower is not modelled"), std::string::npos) << name;
  }
  EXPECT_EQ(Load("kimi-k2.5").moe.num_experts, 384);  // text_config's own DeepseekV3 reader
}

TEST(ConfigParser, HybridLayerKinds) {
  const ModelSpec q = Load("qwen3.5-397b-a17b");
  EXPECT_EQ(q.layers[0].mixer, MixerKind::kLinearAttention);
  EXPECT_EQ(q.layers[3].mixer, MixerKind::kAttention);
  EXPECT_TRUE(q.attention_output_gate);
  EXPECT_EQ(q.recurrent->state_dtype, Dtype::kFp32);  // mamba_ssm_dtype
  const ModelSpec n = Load("nemotron-h-56b");  // its config holds a bare Infinity (Python JSON)
  EXPECT_EQ(n.layers[0].mixer, MixerKind::kMamba2);
  EXPECT_EQ(n.layers[1].mixer, MixerKind::kNone);
  EXPECT_EQ(n.layers[1].ffn, FfnKind::kDense);
  EXPECT_FALSE(n.gated_ffn);
  ASSERT_TRUE(Load("glm-5").indexer.has_value());
  EXPECT_EQ(Load("glm-5").indexer->topk, 2048);
  EXPECT_EQ(Load("minimax-m2.5").qk_norm, QkNorm::kPerLayer);
}

TEST(ConfigParserErrors, WrapperWithoutTextConfig) {
  EXPECT_EQ(ErrorOf(R"({"architectures": ["KimiK25ForConditionalGeneration"]})"),
            "config.json: 'KimiK25ForConditionalGeneration' is a multimodal wrapper and needs a "
            "'text_config' object holding its language model; pass the full config.json");
}

TEST(ConfigParserErrors, UnknownLayerTypeInHybridPattern) {
  const std::string nemotron = ErrorOf(R"({"architectures": ["NemotronHForCausalLM"],
      "hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 3, "vocab_size": 10,
      "intermediate_size": 8, "hybrid_override_pattern": "M*X"})");
  EXPECT_EQ(nemotron,
            "config.json: hybrid_override_pattern[2] is 'X', an unknown layer type; "
            "use M (Mamba-2), * (attention) or - (MLP)");
  const std::string qwen = ErrorOf(R"({"architectures": ["Qwen3_5MoeForCausalLM"],
      "hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 2, "vocab_size": 10,
      "layer_types": ["linear_attention", "mamba"]})");
  EXPECT_EQ(qwen,
            "config.json: layer_types[1] is \"mamba\", an unknown layer type; a hybrid "
            "Qwen3.5 layer is 'linear_attention' or 'full_attention'");
}

TEST(ConfigParserErrors, NonFiniteNumberInAKeyWeRead) {
  EXPECT_EQ(ErrorOf(R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 64,
      "num_attention_heads": 4, "num_hidden_layers": 2, "vocab_size": 10,
      "intermediate_size": 8, "rms_norm_eps": NaN})"),
            "config.json: 'rms_norm_eps' must be a number, got \"NaN\"");
}

TEST(ModelCatalog, UnknownNameSuggestsNearest) {
  auto m = LoadModel("llama-3.1-7b");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("did you mean"), std::string::npos);
  EXPECT_NE(m.status().message().find("'llama-3.1-8b'"), std::string::npos) << m.status().message();
}

TEST(ModelCatalog, MissingFileNamesPath) {
  auto m = LoadModel("/nonexistent/config.json");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().message(), "/nonexistent/config.json: cannot open file (check the path)");
}

}  // namespace
}  // namespace shardwise
