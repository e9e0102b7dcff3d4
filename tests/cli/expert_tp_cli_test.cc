// End-to-end: expert-TP over attention DP ("dp8ep4etp2": 8 attention-DP ranks whose experts are
// split ep4 x expert-TP 2), as TensorRT-LLM and SGLang deploy DeepSeek and Qwen3 MoE, in explain,
// simulate, plan and --emit; the runtime and train say they do not take it.
#include <gtest/gtest.h>

#include <string>

#include "run_binary.h"

namespace shardwise::testing {
namespace {

const std::string kQwen = " --model qwen3-235b-a22b --cluster dgx-h200";

TEST(ExpertTpCli, ExplainAndSimulateTheLayout) {
  const RunResult e = RunShardwise("explain" + kQwen + " --layout dp8ep4etp2 --batch 256 --json");
  ASSERT_EQ(e.exit_code, 0) << e.err;
  const nlohmann::json j = e.Json();
  EXPECT_EQ(j["layout"], "dp8ep4etp2");
  // The MoE exchange is the gather over the 8-GPU group, priced as EP communication.
  EXPECT_GT(j["decode"]["ep_comm_s"].get<double>(), 0);
  const RunResult s =
      RunShardwise("simulate" + kQwen + " --layout dp8ep4etp2 --concurrency 64 --json");
  ASSERT_EQ(s.exit_code, 0) << s.err;
  EXPECT_EQ(s.Json()["layout"], "dp8ep4etp2");
}

TEST(ExpertTpCli, PlanSearchesItAndEmitsTheEnginesFlags) {
  const RunResult p = RunShardwise("plan" + kQwen + " --top 40 --disagg off --json");
  ASSERT_EQ(p.exit_code, 0) << p.err;
  const nlohmann::json plan = p.Json();
  bool found = false;
  for (const auto& l : plan["layouts"]) found = found || l["layout"] == "dp8ep4etp2";
  EXPECT_TRUE(found) << "plan ranks expert-TP over attention DP among its layouts";
  // TensorRT-LLM: --tp_size 8 --ep_size 4, attention DP on, moe_tp 2 written out.
  const RunResult t = RunShardwise("plan" + kQwen + " --layout dp8ep4etp2 --emit trtllm");
  ASSERT_EQ(t.exit_code, 0) << t.err;
  for (const char* want : {"--tp_size 8 ", "--ep_size 4 ", "enable_attention_dp: true",
                           "moe_tensor_parallel_size: 2", "moe_expert_parallel_size: 4"}) {
    EXPECT_NE(t.out.find(want), std::string::npos) << want << "\n" << t.out;
  }
  // SGLang: --tp-size 8 --dp-size 8 --enable-dp-attention --ep-size 4 (expert-TP = 8 / 4).
  const RunResult g = RunShardwise("plan" + kQwen + " --layout dp8ep4etp2 --emit sglang");
  ASSERT_EQ(g.exit_code, 0) << g.err;
  for (const char* want :
       {"--tp-size 8 ", "--dp-size 8 ", "--enable-dp-attention", "--ep-size 4 "}) {
    EXPECT_NE(g.out.find(want), std::string::npos) << want << "\n" << g.out;
  }
  // vLLM has no expert-TP beside EP: said, not faked.
  const RunResult v = RunShardwise("plan" + kQwen + " --layout dp8ep4etp2 --emit vllm");
  ASSERT_EQ(v.exit_code, 0) << v.err;
  EXPECT_NE(v.out.find("no expert-TP beside EP"), std::string::npos) << v.out;
}

TEST(ExpertTpCli, WhatDoesNotTakeItSaysSo) {
  ExpectOneLineError(
      RunShardwise("explain" + kQwen + " --layout dp8ep4etp2 --ep-algorithm low-latency"),
      "need etp 1");
  ExpectOneLineError(RunShardwise("run --model tiny-moe --layout dp4ep2etp2 --batch 4"), "runtime");
  ExpectOneLineError(
      RunShardwise("train --model qwen3-30b-a3b --cluster dgx-h100 --layout dp8ep4etp2"),
      "drop etp");
  ExpectOneLineError(RunShardwise("explain" + kQwen + " --layout dp4ep4etp2"),
                     "ep x etp (8) must divide");
}

}  // namespace
}  // namespace shardwise::testing
