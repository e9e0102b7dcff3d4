// Model dimensions beyond any real model, and configs whose derived sizes would overflow, are
// refused with the config key; wrong JSON types are errors, not exceptions.
#include "shardwise/model/model_limits.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "shardwise/catalog/embedded.h"
#include "shardwise/model/accounting.h"
#include "shardwise/model/config_parser.h"

namespace shardwise {
namespace {

nlohmann::json Catalog(const std::string& name) {
  return nlohmann::json::parse(*catalog::ReadEmbedded("models/" + name + ".json"));
}

std::string ErrorOf(const nlohmann::json& config) {
  const StatusOr<ModelSpec> m = ParseHfConfig(config, "config.json", "m");
  return m.ok() ? "" : m.status().message();
}

TEST(ModelLimits, HugeHiddenSizeIsRefusedNotOverflowed) {
  nlohmann::json c = Catalog("llama-3.1-8b");
  c["hidden_size"] = 1e15;  // the case: printed negative parameter counts before
  EXPECT_EQ(ErrorOf(c),
            "config.json: hidden_size (1000000000000000) is outside the accepted range 0 to "
            "1048576; check the config");
}

TEST(ModelLimits, DerivedSizesAreCheckedForOverflow) {
  // Every dimension within its own limit, but 2^16 experts x 2^22 wide x 2^20 hidden x 3
  // matrices = 3 x 2^58 parameters per layer: over 10^15 (and over int64 after 16 layers).
  nlohmann::json c = Catalog("qwen3-30b-a3b");
  c["hidden_size"] = 1 << 20;
  c["head_dim"] = 128;
  c["num_experts"] = 1 << 16;
  c["moe_intermediate_size"] = 1 << 22;
  EXPECT_NE(ErrorOf(c).find("give more than 1e+15 parameters"), std::string::npos) << ErrorOf(c);
}

TEST(ModelLimits, MlaHeadDimsCannotOverflowTheirSum) {
  nlohmann::json c = Catalog("deepseek-v3");
  c["qk_nope_head_dim"] = int64_t{1} << 62;
  c["qk_rope_head_dim"] = int64_t{1} << 62;
  EXPECT_EQ(ErrorOf(c),
            "config.json: 'qk_nope_head_dim' (4611686018427387904) is larger than the largest "
            "accepted, 1048576");
}

TEST(ModelLimits, LayerCountIsBounded) {
  nlohmann::json c = Catalog("llama-3.1-8b");
  c["num_hidden_layers"] = 100000;
  EXPECT_EQ(ErrorOf(c),
            "config.json: 'num_hidden_layers' (100000) is larger than the largest accepted, 4096");
}

TEST(ModelLimits, EveryCatalogModelIsWithinTheLimits) {
  // The limits sit far above real models: each catalog model parses and its parameter count
  // (an independent int64 computation in accounting) is positive.
  for (const std::string& name : catalog::NamesIn("models")) {
    const StatusOr<ModelSpec> m = ParseHfConfig(Catalog(name), name, name);
    ASSERT_TRUE(m.ok()) << m.status().message();
    EXPECT_GT(CountParams(*m).total, 0) << name;
  }
}

TEST(ConfigTypes, WrongTypesAreErrors) {
  nlohmann::json c = Catalog("qwen3-30b-a3b");
  c["mlp_only_layers"] = {1, "a"};
  EXPECT_EQ(ErrorOf(c), "config.json: 'mlp_only_layers' must list layer indices, got \"a\"");
  nlohmann::json q = Catalog("llama-3.1-8b");
  q["quantization_config"] = {{"quant_method", 5}};
  EXPECT_EQ(ErrorOf(q), "config.json: quantization_config.quant_method must be a string, got 5");
}

}  // namespace
}  // namespace shardwise
