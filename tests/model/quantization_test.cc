// Per-module weight formats from the checkpoint's quantization config, and weight bytes summed
// over modules (hand calculations).
#include <gtest/gtest.h>

#include "load_model.h"
#include "shardwise/model/accounting.h"
#include "shardwise/model/catalog.h"
#include "shardwise/model/config_parser.h"
#include "shardwise/model/dtype.h"

namespace shardwise {
namespace {

using testing::Load;

const WeightFormat kBf16 = WeightFormat::Of(Dtype::kBf16);

TEST(Quantization, ValueBitsLeaveTheBlockScalesOut) {
  // OCP MX and NVIDIA's NVFP4 store 4-bit values (E2M1) with a scale per block of 32 and 16:
  // their stored bytes differ, their values do not (the "weight-only" note compares these).
  EXPECT_EQ(ValueBits(Dtype::kMxfp4), 4);
  EXPECT_EQ(ValueBits(Dtype::kFp4), 4);
  EXPECT_EQ(ValueBits(Dtype::kInt4), 4);
  EXPECT_EQ(ValueBits(Dtype::kFp8), 8);
  EXPECT_EQ(ValueBits(Dtype::kBf16), 16);
  EXPECT_GT(BytesPerElement(Dtype::kFp4), BytesPerElement(Dtype::kMxfp4));
}

TEST(Quantization, Fp8BlockKeepsTablesAndRoutersInBf16) {
  // DeepSeek-V3 and MiniMax-M2.5: quant_method fp8, 128 x 128 blocks; MiniMax also lists
  // "gate" (the router) and "lm_head" in modules_to_not_convert.
  for (const char* name : {"deepseek-v3", "minimax-m2.5"}) {
    const WeightFormats f = Load(name).native_formats;
    EXPECT_EQ(f.routed_experts, WeightFormat::Of(Dtype::kFp8)) << name;
    EXPECT_EQ(f.mixer, WeightFormat::Of(Dtype::kFp8)) << name;
    EXPECT_EQ(f.embedding, kBf16) << name;
    EXPECT_EQ(f.lm_head, kBf16) << name;
    EXPECT_EQ(f.router, kBf16) << name;
  }
}

TEST(Quantization, Mxfp4ExpertsOnly) {
  const WeightFormats f = Load("gpt-oss-120b").native_formats;
  EXPECT_EQ(f.routed_experts, WeightFormat::Of(Dtype::kMxfp4));
  EXPECT_EQ(f.mixer, kBf16);
  EXPECT_EQ(f.Describe(), "experts mxfp4, rest bf16");
}

TEST(Quantization, CompressedTensorsInt4Group32OnKimiExperts) {
  // Kimi-K2.5 text_config: int4 weights in groups of 32 (one bf16 scale each: 0.5 + 2/32 =
  // 0.5625 B per weight) on every Linear except lm_head, self_attn, shared_experts and the
  // dense MLP -> only the routed experts.
  const WeightFormats f = Load("kimi-k2.5").native_formats;
  EXPECT_EQ(f.routed_experts.dtype, Dtype::kInt4);
  EXPECT_DOUBLE_EQ(f.routed_experts.bytes_per_param, 0.5625);
  EXPECT_EQ(f.mixer, kBf16);
  EXPECT_EQ(f.shared_experts, kBf16);
  EXPECT_EQ(f.dense_ffn, kBf16);
  EXPECT_EQ(f.lm_head, kBf16);
  EXPECT_EQ(f.Describe(), "experts int4/g32, rest bf16");
}

TEST(Quantization, Nvfp4FromHfQuantConfigBesideConfigJson) {
  // nvidia/Qwen3-235B-A22B-NVFP4's hf_quant_config.json: quant_algo NVFP4 (4 bits + one fp8
  // scale per 16 = 0.5625 B) on all linear layers except the routers ("mlp.gate") and lm_head.
  const ModelSpec m =
      Load(std::string(SHARDWISE_SOURCE_DIR) + "/tests/data/qwen3-235b-a22b-nvfp4/config.json");
  const WeightFormats& f = m.native_formats;
  EXPECT_EQ(f.routed_experts, WeightFormat::Of(Dtype::kFp4));
  EXPECT_EQ(f.mixer, WeightFormat::Of(Dtype::kFp4));
  EXPECT_EQ(f.router, kBf16);
  EXPECT_EQ(f.lm_head, kBf16);
  EXPECT_EQ(m.native_dtype, Dtype::kFp4);
}

constexpr const char* kTinyLlama = R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 64,
    "num_attention_heads": 4, "num_hidden_layers": 2, "vocab_size": 100,
    "intermediate_size": 128, "torch_dtype": "bfloat16", "quantization_config": )";

TEST(Quantization, AwqInt4WeightBytesByHand) {
  // Two layers of attention 4 x 64 x 64 = 16,384 and MLP 3 x 64 x 128 = 24,576 params, at
  // 0.5 + 2/128 = 0.515625 B: 81,920 x 0.515625 = 42,240 B. Embedding and LM head 2 x 100 x 64
  // and norms (2 x 2 + 1) x 64 stay bf16: (12,800 + 320) x 2 = 26,240 B. Total 68,480 B.
  auto m = ParseHfConfigText(
      std::string(kTinyLlama) + R"({"quant_method": "awq", "bits": 4, "group_size": 128}})",
      "config.json", "tiny-awq");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_DOUBLE_EQ(NativeWeightBytes(*m), 68'480);
  // int4 is named without its group when the group is 128, shardwise's int4 default.
  EXPECT_EQ(m->native_formats.Describe(), "embedding bf16, LM head bf16, rest int4");
}

TEST(QuantizationErrors, UnknownMethodAndBadBits) {
  auto unknown = ParseHfConfigText(std::string(kTinyLlama) + R"({"quant_method": "hqq"}})",
                                   "config.json", "x");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("quantization method 'hqq' is not supported"),
            std::string::npos)
      << unknown.status().message();
  auto bits = ParseHfConfigText(std::string(kTinyLlama) + R"({"quant_method": "gptq", "bits": 3}})",
                                "config.json", "x");
  ASSERT_FALSE(bits.ok());
  EXPECT_NE(bits.status().message().find("only 4-bit"), std::string::npos);
}

}  // namespace
}  // namespace shardwise
