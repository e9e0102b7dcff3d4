// shardwise against an independent implementation: tests/reference/reference_forward.py, a
// float64 NumPy forward pass written from the architectures' published descriptions, runs the
// same safetensors checkpoint and prompts; the unsharded run's greedy tokens must be identical
// and its last-step logits within fp32 rounding (max |diff| / max |logit| <= 5e-7, the agreement
// measured by hand between shardwise, llama.cpp and NumPy on plain Llama shapes). Skipped only
// when no python3 with NumPy is found (scripts/install-deps.sh installs python3-numpy).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "shardwise/common/json_fields.h"
#include "shardwise/model/catalog.h"
#include "shardwise/runtime/checkpoint.h"
#include "shardwise/runtime/comm/thread_comm.h"
#include "shardwise/runtime/runner.h"

namespace shardwise {
namespace {

constexpr double kRelativeBar = 5e-7;

// The first python3 that imports numpy: Debian's (where install-deps.sh puts python3-numpy),
// then whatever PATH finds. Empty when there is none.
std::string PythonWithNumpy() {
  for (const std::string python : {"/usr/bin/python3", "python3"}) {
    if (std::system((python + " -c 'import numpy' >/dev/null 2>&1").c_str()) == 0) return python;
  }
  return "";
}

struct Case {
  std::string config;           // path under the source tree
  nlohmann::json rope_scaling;  // replaces the config's rope_scaling unless null
  int64_t prompt_tokens = 12;
  int64_t generate_tokens = 6;
};

void PrintTo(const Case& k, std::ostream* os) { *os << k.config << " " << k.rope_scaling.dump(); }

struct Comparison {
  double max_relative_error = 0;
  std::vector<std::vector<int64_t>> shardwise_tokens, reference_tokens;
};

Comparison Compare(const std::string& name, const Case& k) {
  const std::string dir =
      (std::filesystem::temp_directory_path() / ("shardwise_ref_" + name)).string();
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  nlohmann::json config = ReadJsonFile(std::string(SHARDWISE_SOURCE_DIR) + "/" + k.config).value();
  if (!k.rope_scaling.is_null()) config["rope_scaling"] = k.rope_scaling;
  std::ofstream(dir + "/config.json") << config.dump(2);
  RunConfig c;
  auto model = LoadModel(dir + "/config.json");
  EXPECT_TRUE(model.ok()) << model.status().message();
  c.model = model.value();
  c.batch = 2;
  c.prompt_tokens = k.prompt_tokens;
  c.generate_tokens = k.generate_tokens;
  c.seed = 11;
  c.weights_dir = dir;
  EXPECT_TRUE(WriteGeneratedCheckpoint(c.model, c.seed, dir, 1).ok());

  RunResult ours;
  const Status run = RunOnThreads(1, 60, [&](Communicator& w) -> Status {
    SW_ASSIGN_OR_RETURN(ours, RunRank(c, w));
    return Status();
  });
  EXPECT_TRUE(run.ok()) << run.message();

  nlohmann::json request = {{"gen", c.generate_tokens}, {"prompts", nlohmann::json::array()}};
  for (int64_t s = 0; s < c.batch; ++s) request["prompts"].push_back(PromptTokens(c, s));
  std::ofstream(dir + "/request.json") << request.dump();
  const std::string command = PythonWithNumpy() + " " + SHARDWISE_SOURCE_DIR +
                              "/tests/reference/reference_forward.py " + dir + " " + dir +
                              "/request.json " + dir + "/reference.json";
  Comparison out;
  const int rc = std::system(command.c_str());
  EXPECT_EQ(rc, 0) << command;
  auto read = ReadJsonFile(dir + "/reference.json");
  if (rc != 0 || !read.ok()) {
    out.max_relative_error = INFINITY;
    return out;
  }
  const nlohmann::json& ref = *read;
  out.shardwise_tokens = ours.tokens;
  out.reference_tokens = ref["tokens"].get<std::vector<std::vector<int64_t>>>();
  double scale = 0, diff = 0;
  for (int64_t s = 0; s < c.batch; ++s) {
    const std::vector<double> logits = ref["logits"][s].get<std::vector<double>>();
    EXPECT_EQ(static_cast<int64_t>(logits.size()), ours.vocab);
    for (int64_t v = 0; v < ours.vocab; ++v) {
      scale = std::max(scale, std::fabs(logits[v]));
      diff = std::max(diff, std::fabs(logits[v] - ours.logits[s * ours.vocab + v]));
    }
  }
  out.max_relative_error = diff / scale;
  std::filesystem::remove_all(dir);
  return out;
}

class Reference : public ::testing::TestWithParam<std::pair<std::string, Case>> {};

TEST_P(Reference, LogitsAndGreedyTokensMatch) {
  if (PythonWithNumpy().empty()) GTEST_SKIP() << "no python3 with numpy (scripts/install-deps.sh)";
  const auto& [name, k] = GetParam();
  const Comparison c = Compare(name, k);
  EXPECT_LE(c.max_relative_error, kRelativeBar) << name;
  EXPECT_EQ(c.shardwise_tokens, c.reference_tokens) << name;
  RecordProperty("max_relative_error", fmt::format("{:.2e}", c.max_relative_error));
}

const std::string kLlama = "tests/reference/configs/tiny-llama3.json";

INSTANTIATE_TEST_SUITE_P(
    TinyArchitectures, Reference,
    ::testing::Values(
        std::pair{std::string("llama_llama3_rope"), Case{kLlama, nullptr}},
        std::pair{std::string("llama_yarn_rope"),
                  Case{kLlama,
                       {{"rope_type", "yarn"},
                        {"factor", 4.0},
                        {"original_max_position_embeddings", 128}}}},
        std::pair{std::string("llama_linear_rope"),
                  Case{kLlama, {{"type", "linear"}, {"factor", 2.0}}}},
        // Dynamic scaling acts once a pass exceeds the trained 8 tokens: a 14-token prefill.
        std::pair{std::string("llama_dynamic_rope"), Case{kLlama,
                                                          {{"rope_type", "dynamic"},
                                                           {"factor", 2.0},
                                                           {"original_max_position_embeddings", 8}},
                                                          14,
                                                          1}},
        std::pair{std::string("qwen3"), Case{"tests/reference/configs/tiny-qwen3.json", nullptr}},
        std::pair{std::string("mixtral"),
                  Case{"tests/reference/configs/tiny-mixtral.json", nullptr}},
        std::pair{std::string("qwen2_moe"), Case{"data/models/tiny-moe.json", nullptr, 8, 4}}),
    [](const auto& info) { return info.param.first; });

}  // namespace
}  // namespace shardwise
