// End-to-end: `explain`, `plan` and `roofline` as a user runs them, and their bad input.
#include <gtest/gtest.h>

#include "run_binary.h"

namespace shardwise::testing {
namespace {

TEST(ExplainCli, DefaultsRun) {
  const RunResult r = RunShardwise("explain");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* text : {"prefill", "decode", "TTFT", "TPOT", "memory per GPU", "bound by"}) {
    EXPECT_NE(r.out.find(text), std::string::npos) << text;
  }
}

TEST(ExplainCli, PhaseColumnsAddUpToTheTotal) {
  // Each phase's parts (FLOP-bound, HBM-bound, the collectives, the bubble, and the kernels'
  // fixed times with the engine's host time) sum to its total when nothing overlaps (TP8, no
  // EP): the text's columns had left out the last ~3 ms, so a decode read 9.4 of 12.4 ms.
  const RunResult r = RunShardwise("explain --model llama-3.1-70b --layout tp8 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = r.Json();
  for (const char* phase : {"prefill", "decode"}) {
    const auto& p = j[phase];
    double sum = 0;
    for (const char* part : {"compute_s", "memory_s", "tp_comm_s", "ep_comm_s", "cp_comm_s",
                             "pp_comm_s", "bubble_s", "launch_s", "overhead_s"}) {
      sum += p[part].get<double>();
    }
    EXPECT_NEAR(sum, p["total_s"].get<double>(), 1e-9 * sum) << phase;
  }
  const RunResult text = RunShardwise("explain --model llama-3.1-70b --layout tp8");
  EXPECT_NE(text.out.find("launch + host"), std::string::npos) << text.out;
}

TEST(ExplainCli, Tp16AcrossNodesShowsTheCrossNodeAllReduceDominating) {
  const RunResult r = RunShardwise(
      "explain --model llama-3.1-70b --cluster dgx-h100 --nodes 2 --layout tp16 --batch 32 "
      "--context 2048 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = r.Json();
  EXPECT_NE(j["bound"].get<std::string>().find("TP all-reduce over scale-out"), std::string::npos);
  EXPECT_GT(j["decode"]["tp_comm_s"].get<double>(), 0.5 * j["decode_tpot_s"].get<double>());
  EXPECT_TRUE(j["over_parallelised"].get<bool>());
  const RunResult text = RunShardwise("explain --nodes 2 --layout tp16");
  EXPECT_NE(text.out.find("over-parallelised"), std::string::npos);
}

// The usable memory's arithmetic follows the engine's rule. TensorRT-LLM keeps 0.9 of what the
// weights, activations and buffers leave free of the GPU less its runtime (data/engines): it
// had read "83.1 GB usable (85.5 GB x 0.9, reserve 2.4 GB)", where 85.5 x 0.9 = 77.0. By hand
// from the JSON: fixed + 0.9 x (HBM - runtime - fixed) = usable, fixed the weights, activations
// and buffers.
TEST(ExplainCli, UsableMemoryFollowsTheEnginesRule) {
  const std::string explain = "explain --model llama-3.1-70b --gpus 4 --layout dp2tp2";
  const RunResult text = RunShardwise(explain);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("(trtllm-1.0: weights, activations and buffers, then 0.9 of what they "
                          "leave of 85.5 GB less the runtime's 1.1 GB)"),
            std::string::npos)
      << text.out;
  const auto m = RunShardwise(explain + " --json").Json()["memory"];
  const double usable = m["usable_bytes"], kv = m["kv_bytes"];
  const double hbm = usable + m["reserve_bytes"].get<double>();
  const double runtime = 1073741824;  // data/engines/trtllm-1.0.json runtime_reserve_bytes
  const double fixed = m["weights_bytes"].get<double>() + m["activation_bytes"].get<double>() +
                       m["comm_buffer_bytes"].get<double>();
  EXPECT_NEAR(fixed + 0.9 * (hbm - runtime - fixed), usable, 0.01 * kv) << m.dump();
}

TEST(ExplainCli, Llama70bBf16DoesNotFitOneH100) {
  // vLLM's rule: 0.9 of the 81,559 MiB the driver reports (85.52e9 B) = 76.97e9 B, "77.0 GB".
  const RunResult r =
      RunShardwise("explain --model llama-3.1-70b --gpus 1 --layout tp1 --engine vllm");
  ExpectOneLineError(r, "does not fit");
  EXPECT_NE(r.err.find("141.1 GB of weights"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("77.0 GB"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("short by"), std::string::npos) << r.err;
}

TEST(ExplainCli, DoesNotFitNamesEveryComponent) {
  // A million sequences: the shortfall is KV and per-sequence logits, not the weights.
  const RunResult r = RunShardwise("explain --batch 1000000 --context 4096");
  ExpectOneLineError(r, "does not fit");
  EXPECT_NE(r.err.find("of KV (1000000 sequences x 4096 tokens)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("of activations and buffers per GPU"), std::string::npos) << r.err;
}

TEST(ExplainCliErrors, BadLayouts) {
  ExpectOneLineError(RunShardwise("explain --layout tp3"), "tp (3) must divide llama-3.1-70b's 64");
  ExpectOneLineError(RunShardwise("explain --layout tp8zz2"), "unknown degree 'zz'");
  ExpectOneLineError(RunShardwise("explain --layout ep8"), "is dense");
  ExpectOneLineError(RunShardwise("explain --layout tp8pp2"), "needs 16 GPUs");
  ExpectOneLineError(RunShardwise("explain --model mixtral-8x7b --layout ep16 --nodes 2"),
                     "must divide mixtral-8x7b's 8 experts");
  ExpectOneLineError(RunShardwise("explain --batch 0"), "--batch must be between");
  ExpectOneLineError(RunShardwise("explain --gpu-memory-utilization 1.5"),
                     "--gpu-memory-utilization");
}

TEST(PlanCli, DefaultsAndJson) {
  const RunResult text = RunShardwise("plan");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("Pareto front"), std::string::npos);
  // The table says how it ranks, and the front that it is the step model's, not the simulation's.
  EXPECT_NE(text.out.find("ranked by tok/s/GPU at load, those within 2% by TPOT"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("Pareto front of the step model, unsimulated"), std::string::npos);
  EXPECT_NE(text.out.find("why:"), std::string::npos);
  const RunResult r = RunShardwise(
      "plan --model llama-3.1-70b --cluster dgx-h100 --nodes 2 "
      "--objective latency --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto layouts = r.Json()["layouts"];
  ASSERT_FALSE(layouts.empty());
  for (const char* key : {"layout", "gpus", "batch", "ttft_s", "tpot_s", "unloaded_ttft_s",
                          "decode_tpot_s", "output_tokens_per_s", "output_tokens_per_s_per_gpu",
                          "memory_per_gpu_bytes", "bound", "why"}) {
    EXPECT_TRUE(layouts[0].contains(key)) << key;
  }
  // Latency on two nodes keeps TP inside a node (the Parallelism guide: TP8 with PP2, or DP2).
  EXPECT_EQ(layouts[0]["tp"], 8);
}

TEST(PlanCli, LongPromptsRankOnlyLayoutsTheEngineLaunches) {
  // No built-in engine serves context parallelism (--emit refuses cp), so plan ranks none, and
  // says so; simulate of a cp layout still models it, with a note.
  const RunResult r = RunShardwise(
      "plan --model llama-3.1-70b --cluster dgx-h100 --gpus 8 --isl 8192 --osl 256 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json out = r.Json();
  ASSERT_FALSE(out["layouts"].empty());
  for (const nlohmann::json& l : out["layouts"]) EXPECT_EQ(l["cp"], 1) << l["layout"];
  EXPECT_NE(out["notes"].dump().find("serves without context parallelism"), std::string::npos);
  const RunResult sim = RunShardwise(
      "simulate --model llama-3.1-70b --cluster dgx-h100 --gpus 8 --layout tp4cp2 --isl 8192 "
      "--osl 256 --concurrency 4 --engine vllm-0.12");
  ASSERT_EQ(sim.exit_code, 0) << sim.err;
  EXPECT_NE(sim.err.find("vllm-0.12 serves without context parallelism, so tp4cp2's cp 2 is "
                         "modelled"),
            std::string::npos)
      << sim.err;
  // plan of that one layout notes it alike.
  const RunResult one = RunShardwise(
      "plan --model llama-3.1-70b --cluster dgx-h100 --gpus 8 --layout tp4cp2 --isl 8192 "
      "--osl 256 --engine vllm-0.12 --json");
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_NE(one.Json()["notes"].dump().find("so tp4cp2's cp 2 is modelled"), std::string::npos)
      << one.Json()["notes"];
}

TEST(PlanCli, MoeAcrossNodesPicksExpertParallelism) {
  const RunResult r = RunShardwise(
      "plan --model qwen3-235b-a22b --cluster dgx-h100 --nodes 2 "
      "--dtype fp8 --objective throughput --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_GT(r.Json()["layouts"][0]["ep"].get<int>(), 1);
}

TEST(PlanCliErrors, BadInput) {
  ExpectOneLineError(RunShardwise("plan --model llama-3.1-405b --gpus 2"), "does not fit");
  ExpectOneLineError(RunShardwise("plan --objective speed"), "unknown objective 'speed'");
  ExpectOneLineError(RunShardwise("plan --max-tpot-ms 0.001"), "meets the SLOs");
  ExpectOneLineError(RunShardwise("plan --isl 0"), "--isl must be between");
  ExpectOneLineError(RunShardwise("plan --dtype int3"), "unknown dtype 'int3'");
}

TEST(RooflineCli, DefaultsAndJson) {
  const RunResult r = RunShardwise("roofline");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("sweet spot"), std::string::npos);
  const RunResult j = RunShardwise("roofline --model deepseek-v3 --dtype fp8 --json");
  ASSERT_EQ(j.exit_code, 0) << j.err;
  EXPECT_GT(j.Json()["sweet_spot_batch"].get<double>(), 1000);
  ExpectOneLineError(RunShardwise("roofline --gpu h1000"), "unknown GPU 'h1000'");
}

}  // namespace
}  // namespace shardwise::testing
