// End-to-end: the 2026 models in `shardwise models`, with their KV and state bytes, and the
// bad input of the new readers (one line, exit 2).
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "run_binary.h"

namespace shardwise::testing {
namespace {

TEST(Models2026Cli, ListsEveryNewModel) {
  const RunResult r = RunShardwise("models --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Published totals (sources in tests/model/architectures_2026_test.cc) and hand-calculated
  // KV bytes per token (bf16) and recurrent state per sequence.
  struct Row {
    const char* name;
    double published_total;
    double kv_bytes_per_token;
    double state_bytes_per_sequence;
  };
  const Row rows[] = {
      {"minimax-m2.5", 229e9, 62 * 2 * 8 * 128 * 2, 0},
      {"qwen3.5-397b-a17b", 397e9, 15 * 2 * 2 * 256 * 2, 45 * (64 * 128 * 128 * 4 + 12288 * 3 * 2)},
      {"qwen3.5-35b-a3b", 35e9, 10 * 2 * 2 * 256 * 2, 30 * (32 * 128 * 128 * 4 + 8192 * 3 * 2)},
      {"deepseek-v3.2", 671e9, 61 * (512 + 64 + 128) * 2, 0},
      {"glm-5", 744e9, 78 * (512 + 64 + 128) * 2, 0},
      {"llama-4-maverick", 400e9, 48 * 2 * 8 * 128 * 2, 0},
      {"nemotron-h-56b", 56e9, 10 * 2 * 8 * 128 * 2, 54.0 * (256 * 64 * 256 * 2 + 20480 * 3 * 2)},
  };
  for (const Row& row : rows) {
    bool found = false;
    for (const auto& m : r.Json()) {
      if (m["name"] != row.name) continue;
      found = true;
      EXPECT_NEAR(m["total_params"].get<double>() / row.published_total, 1.0, 0.01) << row.name;
      EXPECT_DOUBLE_EQ(m["kv_bytes_per_token"].get<double>(), row.kv_bytes_per_token) << row.name;
      EXPECT_DOUBLE_EQ(m["state_bytes_per_sequence"].get<double>(), row.state_bytes_per_sequence)
          << row.name;
    }
    EXPECT_TRUE(found) << row.name;
  }
  const RunResult table = RunShardwise("models");
  EXPECT_NE(table.out.find("the vision tower is not modelled"), std::string::npos);
  EXPECT_NE(table.out.find("MLA+DSA"), std::string::npos);
  EXPECT_NE(table.out.find("GQA+45 linear"), std::string::npos);
  EXPECT_NE(table.out.find("GQA+54 mamba2"), std::string::npos);
}

// Writes `text` to a temporary config.json and returns its path.
std::string WriteConfig(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

TEST(Models2026CliErrors, BadInputIsOneLine) {
  ExpectOneLineError(
      RunShardwise(
          "models --config " +
          WriteConfig("wrapper.json", R"({"architectures": ["Llama4ForConditionalGeneration"]})")),
      "needs a 'text_config' object");
  ExpectOneLineError(
      RunShardwise("models --config " +
                   WriteConfig("pattern.json", R"({"architectures": ["NemotronHForCausalLM"],
      "hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 2, "vocab_size": 10,
      "intermediate_size": 8, "hybrid_override_pattern": "MQ"})")),
      "unknown layer type");
  ExpectOneLineError(
      RunShardwise("models --config " +
                   WriteConfig("quant.json", R"({"architectures": ["LlamaForCausalLM"],
      "hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 2, "vocab_size": 10,
      "intermediate_size": 8, "quantization_config": {"quant_method": "bitsandbytes"}})")),
      "quantization method 'bitsandbytes' is not supported");
}

}  // namespace
}  // namespace shardwise::testing
