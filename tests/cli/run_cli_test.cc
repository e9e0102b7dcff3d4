// End-to-end: `run` on the threads backend as a user runs it, and its bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <thread>

#include "run_binary.h"

namespace shardwise::testing {
namespace {

TEST(RunCli, DefaultsMatchTheReference) {
  const RunResult r = RunShardwise("run");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("check: matches the unsharded reference"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("predicted"), std::string::npos);
}

TEST(RunCli, SaysWhenTheMachineIsOversubscribed) {
  // Four ranks (tp2pp2) on this machine's cores: a note exactly when there are fewer cores.
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const RunResult r = RunShardwise("run --layout tp2pp2 --batch 1 --gen 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("oversubscribed") != std::string::npos, cores < 4) << cores << r.err;
  const RunResult one = RunShardwise("run --layout tp1 --batch 1 --gen 2");
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_EQ(one.err.find("oversubscribed"), std::string::npos) << one.err;
}

TEST(RunCli, JsonHasTokensAndPhases) {
  const RunResult r = RunShardwise("run --model tiny-moe --layout tp2ep2 --batch 2 --gen 5 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = r.Json();
  ASSERT_EQ(j["tokens"].size(), 2u);
  EXPECT_EQ(j["tokens"][0].size(), 5u);
  EXPECT_TRUE(j["reference"]["tokens_match"].get<bool>());
  EXPECT_GT(j["decode"]["comm"]["all-to-all"]["calls"].get<int>(), 0);
  EXPECT_GT(j["predicted"]["decode_s"].get<double>(), 0);
  // The TP-split LM head: each of the 4 decode steps all-gathers, for rank 0's 2 sequences, its
  // share's 5 numbers (best index, best, second, max |logit|, non-finite count), fp32; the last
  // step also the 2 x 1,024 of the 2,048 vocabulary logits.
  EXPECT_EQ(j["decode"]["comm"]["all-gather"]["calls"], 5);
  EXPECT_EQ(j["decode"]["comm"]["all-gather"]["bytes"].get<double>(), 4 * 2 * 5 * 4 + 2 * 1024 * 4);
}

TEST(RunCli, WeightStorageThreadsAndWaiting) {
  // int8 weights on two ranks of two threads match the unsharded int8 run; the phase table
  // has the waiting column and the JSON its wait and wire split (wait + wire = the call's time).
  const RunResult r =
      RunShardwise("run --layout tp2 --dtype int8 --threads 2 --batch 2 --gen 4 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = r.Json();
  EXPECT_EQ(j["dtype"], "int8");
  EXPECT_EQ(j["threads"], 2);
  EXPECT_TRUE(j["reference"]["matches"].get<bool>());
  const auto& ar = j["decode"]["comm"]["all-reduce"];
  EXPECT_NEAR(ar["wait_s"].get<double>() + ar["wire_s"].get<double>(), ar["time_s"].get<double>(),
              1e-9);
  EXPECT_GE(ar["wait_s"].get<double>(), 0.0);
  const RunResult table = RunShardwise("run --layout tp2 --dtype bf16 --gen 2");
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("waiting"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("bf16"), std::string::npos) << table.out;
}

TEST(RunCli, DumpLogitsWritesNpy) {
  const std::string path = "/tmp/shardwise_logits.npy";
  const RunResult r = RunShardwise("run --layout tp3 --batch 3 --dump-logits " + path);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GT(bytes.size(), 128u);
  EXPECT_EQ(bytes.substr(0, 6), "\x93NUMPY");
  uint16_t header_len = 0;
  std::memcpy(&header_len, bytes.data() + 8, 2);
  EXPECT_EQ((10 + header_len) % 64, 0);  // the format aligns the data to 64 bytes
  const std::string header = bytes.substr(10, header_len);
  EXPECT_NE(header.find("'descr': '<f4'"), std::string::npos);
  EXPECT_NE(header.find("'shape': (3, 2048)"), std::string::npos) << header;  // tiny-dense vocab
  EXPECT_EQ(bytes.size(), 10u + header_len + 3 * 2048 * 4);
}

TEST(RunCli, RunsThePlannersChoice) {
  // STYLE.md: plan and run are separate steps with a serialisable plan between them.
  const RunResult plan = RunShardwise("plan --model tiny-moe --cluster dgx-h100 --gpus 4 --json");
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  std::system(("echo '" + plan.out + "' > /tmp/shardwise_plan.json").c_str());
  const RunResult r = RunShardwise("run --plan /tmp/shardwise_plan.json --batch 4 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.Json()["layout"], plan.Json()["layouts"][0]["layout"]);
  EXPECT_TRUE(r.Json()["reference"]["tokens_match"].get<bool>());
}

TEST(RunCli, ContextParallelMatchesTheReference) {
  const RunResult r =
      RunShardwise("run --model tiny-gptoss --layout tp2cp2 --prompt-len 24 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.Json()["reference"]["tokens_match"].get<bool>());
  EXPECT_LE(r.Json()["reference"]["max_relative_error"].get<double>(), 1e-4);
  EXPECT_GT(r.Json()["prefill"]["comm"]["send-recv"]["calls"].get<int>(), 0);  // the ring
}

TEST(RunCli, RedundantExpertsAndCapacityAreReported) {
  const RunResult r = RunShardwise(
      "run --model tiny-moe --layout tp2ep4 --redundant-experts 4 --capacity-factor 1 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = r.Json();
  EXPECT_TRUE(j["reference"]["tokens_match"].get<bool>());
  EXPECT_EQ(j["moe"]["redundant_experts"], 4);
  // 2 sequences x (16 prompt + 7 fed-back) tokens x 4 MoE layers x top-2 (tiny-moe) pairs.
  EXPECT_EQ(j["moe"]["routed_pairs"], 2 * 23 * 4 * 2);
  EXPECT_GT(j["moe"]["dropped_pairs"].get<int>(), 0);
}

TEST(RunCli, PipelineBubbleBesideTheModel) {
  const RunResult r = RunShardwise("run --layout pp2 --batch 4 --micro-batches 4 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = r.Json()["pipeline"];
  EXPECT_EQ(j["micro_batches"], 4);
  // Fill and drain of 4 micro-batches through 2 stages: 1 idle stage time in 5.
  EXPECT_DOUBLE_EQ(j["prefill_bubble_fraction"]["model"].get<double>(), 1.0 / 5.0);
  // 4 in flight >= 2 stages.
  EXPECT_DOUBLE_EQ(j["decode_bubble_fraction"]["model"].get<double>(), 0.0);
  const double measured = j["prefill_bubble_fraction"]["measured"].get<double>();
  EXPECT_GE(measured, 0.0);
  EXPECT_LE(measured, 1.0);
}

TEST(RunCliErrors, BadInput) {
  ExpectOneLineError(RunShardwise("run --layout tp5"),
                     "tp (5) must divide tiny-dense's 12 attention heads");
  ExpectOneLineError(RunShardwise("run --model tiny-moe --layout ep6"),
                     "ep (6) must divide tiny-moe's 8 experts");
  ExpectOneLineError(RunShardwise("run --layout pp8"), "pp (8) exceeds tiny-dense's 4 layers");
  ExpectOneLineError(RunShardwise("run --layout dp2 --batch 3"), "must be a multiple of dp (2)");
  ExpectOneLineError(RunShardwise("run --backend gloo"), "unknown backend 'gloo'");
  ExpectOneLineError(RunShardwise("run --model gpt-oss-20b --layout tp2"), "of memory here");
  ExpectOneLineError(RunShardwise("run --model deepseek-v3 --layout tp2"), "of memory here");
  ExpectOneLineError(RunShardwise("run --weights /nonexistent"), "no model.safetensors");
  ExpectOneLineError(RunShardwise("run --gen 0"), "must be at least 1");
  ExpectOneLineError(RunShardwise("run --model tiny-moe --capacity-factor 0"),
                     "--capacity-factor (0) must be above 0");
  ExpectOneLineError(RunShardwise("run --model tiny-moe --capacity-factor -0.5"),
                     "--capacity-factor (-0.5) must be above 0");
  ExpectOneLineError(RunShardwise("run --model tiny-moe --layout ep2 --redundant-experts 3"),
                     "experts + redundant (11) must divide by ep (2)");
  ExpectOneLineError(RunShardwise("run --model tiny-moe --layout tp2 --redundant-experts 2"),
                     "needs a mixture-of-experts model and ep > 1");
  ExpectOneLineError(RunShardwise("run --layout pp2 --batch 4 --micro-batches 5"),
                     "--micro-batches (5) must be between 1 and the sequences per DP rank (4)");
  ExpectOneLineError(RunShardwise("run --threads 0"), "--threads (0) must be between 1 and");
  ExpectOneLineError(RunShardwise("run --dtype fp64"), "unknown --dtype 'fp64'");
  ExpectOneLineError(RunShardwise("run --layout cp4 --prompt-len 12"),
                     "--prompt-len (12) must split into 2 x cp = 8 equal chunks");
  ExpectOneLineError(
      RunShardwise("run --plan " SHARDWISE_SOURCE_DIR "/data/models/tiny-dense.json"),
      "not a 'shardwise plan --json' output");
}

TEST(RunCliErrors, UnimplementedRopeScaling) {
  // A Phi-3 style 'longrope' scaling on the tiny shape: refused, never run with plain RoPE.
  const std::string path = ::testing::TempDir() + "/longrope_config.json";
  std::ofstream(path) << R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 64,
      "num_attention_heads": 4, "num_hidden_layers": 2, "vocab_size": 64, "intermediate_size": 128,
      "max_position_embeddings": 256, "rope_scaling": {"rope_type": "longrope", "factor": 4.0}})";
  ExpectOneLineError(RunShardwise("run --model " + path + " --layout tp2"),
                     "rope_scaling type 'longrope' is not implemented by the runtime");
}

}  // namespace
}  // namespace shardwise::testing
