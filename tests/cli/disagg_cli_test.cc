// End-to-end: MoE at scale as DeepSeek deploys it (redundant and routed shared experts,
// DeepEP-class exchange, two-batch overlap) and disaggregated prefill/decode deployments on
// explain, simulate, price and plan, as a user would run them.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

#include "run_binary.h"

namespace shardwise::testing {
namespace {

// DeepSeek-V3 on H800 nodes, DeepEP-class kernels with fp8 dispatch.
const std::string kDeepSeek =
    "--model deepseek-v3 --cluster hgx-h800 --ep-algorithm auto --ep-dispatch-dtype fp8 ";

TEST(DisaggCli, DeepSeekTechReportDeploymentExplainedAndSimulated) {
  // "DeepSeek-V3 Technical Report" 3.4: prefill dp8tp4ep32 on 4 nodes (32 redundant experts,
  // shared expert on every GPU: (256 + 32) / 32 = 9 routed per GPU), decode EP320 on 40 nodes
  // (the shared expert routed, 1 expert per GPU: (256 + 1 + 63) / 320).
  const std::string deployment =
      kDeepSeek +
      "--nodes 44 --prefill-layout dp8tp4ep32 --decode-layout dp320ep320 --redundant-experts 63 "
      "--shared-experts routed --prefill-redundant-experts 32 --prefill-shared-experts "
      "replicated --context 2048 --batch 40960 --json";
  const RunResult e = RunShardwise("explain " + deployment);
  ASSERT_EQ(e.exit_code, 0) << e.err;
  const auto j = e.Json();
  EXPECT_EQ(j["gpus"], 352);
  EXPECT_EQ(PoolOf(j, "prefill")["gpus"], 32);
  EXPECT_EQ(PoolOf(j, "decode")["gpus"], 320);
  // TTFT is the prefill worker's prompt plus the KV transfer the prefill does not hide.
  EXPECT_NEAR(j["unloaded_ttft_s"].get<double>(),
              j["prefill"]["total_s"].get<double>() + j["kv_transfer"]["exposed_s"].get<double>(),
              1e-12);
  // Both carry a band from their inputs' provenance, as an aggregated explain does, and name
  // the assumed inputs.
  for (const char* key : {"unloaded_ttft_s", "decode_tpot_s"}) {
    const double value = j[key].get<double>();
    EXPECT_LT(j[std::string(key) + "_low"].get<double>(), value) << key;
    EXPECT_GT(j[std::string(key) + "_high"].get<double>(), value) << key;
  }
  EXPECT_FALSE(j["assumed_inputs"].empty());
  EXPECT_EQ(j["prefill"]["ep_algorithm"], "node-dedup");
  EXPECT_EQ(j["decode"]["ep_algorithm"], "low-latency");
  // 61 layers x (512 + 64) latent bytes in fp8 per prompt token, 2,048 tokens.
  EXPECT_DOUBLE_EQ(j["kv_transfer"]["bytes_per_prompt"].get<double>(), 61.0 * 576 * 2048);

  const RunResult s = RunShardwise(
      "simulate " + kDeepSeek +
      "--nodes 44 --prefill-layout dp8tp4ep32 --decode-layout dp320ep320 --redundant-experts 63 "
      "--shared-experts routed --prefill-redundant-experts 32 --prefill-shared-experts "
      "replicated --isl 2048 --osl 256 --rate 40 --requests 400 --json");
  ASSERT_EQ(s.exit_code, 0) << s.err;
  const auto r = s.Json();
  EXPECT_EQ(r["requests"], 400);
  EXPECT_EQ(r["gpus"], 352);
  EXPECT_EQ(PoolOf(r, "decode")["layout"], "dp320ep320");
  EXPECT_EQ(r["moe"]["experts_per_gpu"], 1.0);
  EXPECT_EQ(r["moe"]["shared_experts"], "routed");
  EXPECT_GT(r["kv_transfer_s"]["mean"].get<double>(), 0);
  EXPECT_GT(r["ttft_s"]["mean"].get<double>(), r["kv_transfer_s"]["mean"].get<double>());
}

TEST(DisaggCli, DeepSeekDaySixDeploymentOnH800) {
  // DeepSeek's day-6 inference system notes: prefill EP32 on 4 nodes with 32 redundant experts
  // (9 routed + 1 shared per GPU), decode EP144 on 18 nodes with 32 redundant experts (2 routed
  // per GPU: (256 + 32) / 144).
  const RunResult s = RunShardwise(
      "simulate " + kDeepSeek +
      "--nodes 22 --prefill-layout dp32ep32 --decode-layout dp144ep144 --redundant-experts 32 "
      "--overlap tbo --isl 2048 --osl 256 --concurrency 512 --json");
  ASSERT_EQ(s.exit_code, 0) << s.err;
  const auto r = s.Json();
  EXPECT_EQ(r["moe"]["experts_per_gpu"], 2.0);
  EXPECT_EQ(r["gpus"], 176);
  EXPECT_GT(r["tpot_s"]["mean"].get<double>(), 0);
  const RunResult p = RunShardwise(
      "price " + kDeepSeek +
      "--nodes 22 --prefill-layout dp32ep32 --decode-layout dp144ep144 --redundant-experts 32 "
      "--json");
  ASSERT_EQ(p.exit_code, 0) << p.err;
  const auto price = p.Json();
  EXPECT_EQ(price["gpus"], 176);
  // The prefill pool's share of the bill is its share of the GPUs: 32 of 176 at one price.
  EXPECT_NEAR(price["input_time_share"].get<double>(), 32.0 / 176.0, 1e-12);
}

TEST(DisaggCli, PlanPicksADisaggregatedWideEpDeploymentOnSixteenH800Nodes) {
  // A chat workload (2,048 in, 512 out, TTFT 2 s, TPOT 50 ms) for DeepSeek-V3 on 16 H800
  // nodes: plan searches xPyD splits beside the aggregated layouts and says which wins.
  const RunResult r = RunShardwise(
      "plan --model deepseek-v3 --cluster hgx-h800 --nodes 16 --isl 2048 --osl 512 "
      "--max-ttft-ms 2000 --max-tpot-ms 50 --top 3 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = r.Json();
  EXPECT_EQ(j["verdict"]["winner"], "disaggregated") << j["verdict"]["why"];
  const auto& d = j["disaggregated"];
  EXPECT_GT(d["decode"]["layout"].get<std::string>().find("ep"), 0u);
  EXPECT_GT(d["at_load"]["output_tokens_per_s_per_gpu"].get<double>(),
            j["layouts"][0]["output_tokens_per_s_per_gpu"].get<double>());
  EXPECT_LE(d["at_load"]["tpot_s"]["mean"].get<double>(), 0.050);
  EXPECT_LE(d["at_load"]["ttft_s"]["mean"].get<double>(), 2.0);
  EXPECT_NE(j["verdict"]["why"].get<std::string>().find("wins"), std::string::npos);
}

// The first tokens/s figure of the verdict `why` ("...: 12.3 against 654.1 tokens/s per GPU").
double FirstTokensPerGpu(const std::string& why) {
  const size_t colon = why.find(": ");
  return colon == std::string::npos ? -1 : std::stod(why.substr(colon + 2));
}

TEST(DisaggCli, VerdictStatesTheWinnersFiguresFirst) {
  // Disaggregated winner (16 H800 nodes, as above) and aggregated winner (the README's plan of
  // llama-3.1-70b on two DGX H100 at the latency objective): each verdict leads with the
  // winner's tokens/s per GPU.
  const RunResult disagg = RunShardwise(
      "plan --model deepseek-v3 --cluster hgx-h800 --nodes 16 --isl 2048 --osl 512 "
      "--max-ttft-ms 2000 --max-tpot-ms 50 --top 3 --json");
  ASSERT_EQ(disagg.exit_code, 0) << disagg.err;
  const auto d = disagg.Json();
  ASSERT_EQ(d["verdict"]["winner"], "disaggregated");
  EXPECT_NEAR(FirstTokensPerGpu(d["verdict"]["why"]),
              d["disaggregated"]["at_load"]["output_tokens_per_s_per_gpu"].get<double>(), 0.051)
      << d["verdict"]["why"];
  const RunResult agg = RunShardwise(
      "plan --model llama-3.1-70b --cluster dgx-h100 --nodes 2 --objective latency --json");
  ASSERT_EQ(agg.exit_code, 0) << agg.err;
  const auto a = agg.Json();
  ASSERT_EQ(a["verdict"]["winner"], "aggregated");
  EXPECT_NEAR(FirstTokensPerGpu(a["verdict"]["why"]),
              a["layouts"][0]["output_tokens_per_s_per_gpu"].get<double>(), 0.051)
      << a["verdict"]["why"];
  // For latency both sides are simulated at their best batch, one request per replica or per
  // decode worker (the split was once simulated at its full-throughput load against batch 1).
  const auto& split = a["disaggregated"];
  EXPECT_EQ(split["at_load"]["concurrency"].get<double>(),
            split["decode"]["workers"].get<double>());
  EXPECT_NE(a["verdict"]["why"].get<std::string>().find("latency objective ranks by TPOT"),
            std::string::npos)
      << a["verdict"]["why"];
}

TEST(DisaggCli, ExplainDrawsBothPoolsOnTheHtmlPage) {
  const std::string page =
      ::testing::TempDir() + "disagg_explain_" + std::to_string(::getpid()) + ".html";
  std::remove(page.c_str());
  const RunResult r = RunShardwise(
      "explain --model llama-3.1-8b --cluster dgx-h100 --prefill-layout tp2 --decode-layout tp4 "
      "--html " +
      page);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream in(page);
  const std::string html((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(html.find("prefill tp2"), std::string::npos);
  EXPECT_NE(html.find("decode tp4"), std::string::npos);
  std::remove(page.c_str());
}

TEST(DisaggCli, AnotherPrefillWorkerNeverCutsWhatTheSplitServes) {
  // Qwen3-32B on two B200 nodes under SGLang at 10 requests/s of 8,192 + 1,024 tokens: 4 tp1
  // prefill workers and 3 tp2 decode workers keep up; with a fifth prefill worker the decode
  // workers, admitting by the prompt alone, filled their KV, preempted 2,445 sequences (each
  // prefilled again there from its 9,000 tokens) and served 8.7 of the 10. A decode worker now
  // reserves each request's whole life, so it never preempts, and the larger split serves what
  // arrives, as the smaller one does.
  const std::string base =
      "simulate --model qwen3-32b --cluster dgx-b200 --nodes 2 --rate 10 --isl 8192 --osl 1024 "
      "--engine sglang --prefill-layout tp1 --decode-layout tp2 --decode-workers 3 --json "
      "--prefill-workers ";
  const RunResult four = RunShardwise(base + "4");
  const RunResult five = RunShardwise(base + "5");
  ASSERT_EQ(four.exit_code, 0) << four.err;
  ASSERT_EQ(five.exit_code, 0) << five.err;
  for (const RunResult* r : {&four, &five}) {
    const nlohmann::json j = r->Json();
    EXPECT_FALSE(j["load"]["overloaded"].get<bool>());
    EXPECT_EQ(j["preemptions"].get<int64_t>(), 0);
    EXPECT_NEAR(j["load"]["served_requests_per_s"].get<double>(), 10.0, 0.2);
  }
}

TEST(DisaggCli, ExplainServesWhatThePrefillWorkersApiServersPass) {
  // gpt-oss-120b as dp8ep8 prefill and decode workers on two B200 nodes under TensorRT-LLM,
  // 1,024-token prompts: the prefill worker computes about 500 prompts a second, but its one API
  // server tokenizes them one at a time at 3.6 us a token (NVIDIA's live trtllm-serve
  // measurement, closed-loop-ttft.md): 1 / (3.6e-6 x 1,024) = 271.3 a second. explain had said
  // 513; simulate's offline run serves the API server's rate, as explain now does, in the
  // aggregated layout too.
  const double api_server_per_s = 1.0 / (3.6e-6 * 1024);
  const std::string lengths = " --engine trtllm --isl 1024 --osl 64 --batch 512 --json";
  const RunResult split = RunShardwise(
      "explain --model gpt-oss-120b --cluster dgx-b200 --nodes 2 --prefill-layout dp8ep8 "
      "--decode-layout dp8ep8" +
      lengths);
  ASSERT_EQ(split.exit_code, 0) << split.err;
  const nlohmann::json j = split.Json();
  ASSERT_GT(j["requests_per_s"]["prefill_pool"].get<double>(), 1.5 * api_server_per_s);
  EXPECT_NEAR(j["requests_per_s"]["served"].get<double>(), api_server_per_s, 0.01);
  EXPECT_NEAR(j["output_tokens_per_s"].get<double>(), 64 * api_server_per_s, 1);
  // One decode worker keeps up with what arrives, not with what the prefill GPUs compute.
  EXPECT_NEAR(j["balanced_decode_workers"].get<double>(),
              api_server_per_s / j["requests_per_s"]["decode_pool"].get<double>(), 1e-6);
  const RunResult one =
      RunShardwise("explain --model gpt-oss-120b --cluster dgx-b200 --layout dp8ep8" + lengths);
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_TRUE(one.Json()["front_end_binds"].get<bool>());
  EXPECT_NEAR(one.Json()["output_tokens_per_s"].get<double>(), 64 * api_server_per_s, 1);
  // MXFP4 on the B200's FP4 tensor cores multiplies at the 4-bit rate: no "weight-only" note.
  EXPECT_EQ(one.err.find("weight-only"), std::string::npos) << one.err;
  // The H100 has no FP4 tensor cores: it multiplies them in bf16, and says so.
  const RunResult hopper = RunShardwise("explain --model gpt-oss-120b --cluster dgx-h100");
  EXPECT_NE(hopper.err.find("weight-only"), std::string::npos) << hopper.err;
  const RunResult text = RunShardwise(
      "explain --model gpt-oss-120b --cluster dgx-b200 --nodes 2 --prefill-layout dp8ep8 "
      "--decode-layout dp8ep8 --engine trtllm --isl 1024 --osl 64 --batch 512");
  EXPECT_NE(text.out.find("its API server binds"), std::string::npos) << text.out;
}

TEST(DisaggCli, ADecodePoolIsSizedForWhatTheApiServersPass) {
  // Qwen3-30B-A3B prefilled by a dp8ep8 worker on a B200 node under TensorRT-LLM computes about
  // 380 prompts of 1,024 tokens a second, but its one API server tokenizes 1 / (3.6e-6 x 1,024)
  // = 271.27 (NVIDIA's live trtllm-serve measurement, closed-loop-ttft.md): the decode pool is
  // asked to hold what arrives at that rate, not at the prefill pool's: 271.27 x 1,024 steps of
  // about 26 ms, some 7,300 at once, more than 8 tp1 workers' 4,192 sequences.
  const std::string split =
      "simulate --model qwen3-30b-a3b --cluster dgx-b200 --nodes 2 --prefill-layout dp8ep8 "
      "--decode-layout tp1 --decode-workers 8 --engine trtllm --isl 1024 --osl 1024 --rate inf ";
  ExpectOneLineError(RunShardwise(split + "--requests 20000"),
                     "sends it 271.27 requests/s (what its API servers tokenize");
  // 2,000 requests never have more than 2,000 in flight: they fit, and run.
  const RunResult fixed = RunShardwise(split + "--requests 2000 --json");
  ASSERT_EQ(fixed.exit_code, 0) << fixed.err;
  EXPECT_EQ(fixed.Json()["requests"].get<int64_t>(), 2000);
}

TEST(DisaggCliErrors, BadDeploymentsAreOneLine) {
  const std::string pools = "--model llama-3.1-8b --cluster dgx-h100 ";
  ExpectOneLineError(RunShardwise("simulate " + pools + "--prefill-layout tp1"), "--decode-layout");
  ExpectOneLineError(
      RunShardwise("simulate " + pools + "--layout tp2 --prefill-layout tp1 --decode-layout tp1"),
      "not both");
  ExpectOneLineError(RunShardwise("explain " + pools +
                                  "--prefill-layout tp1 --decode-layout tp1 --prefill-workers 0"),
                     "--prefill-workers");
  ExpectOneLineError(RunShardwise("explain " + pools +
                                  "--prefill-layout tp4 --decode-layout tp4 --decode-workers 2"),
                     "needs 12 GPUs");
  ExpectOneLineError(RunShardwise("simulate " + pools +
                                  "--prefill-layout tp1 --decode-layout tp1 --kv-transfer soon"),
                     "--kv-transfer");
  // One tp1 decode worker of Llama-3.1-8B holds a few hundred 8k-token sequences; 6 prefill
  // workers at 100 requests/s of 8,192 + 2,048 tokens need thousands at once.
  ExpectOneLineError(
      RunShardwise("simulate " + pools +
                   "--prefill-layout tp1 --prefill-workers 6 --decode-layout tp1 --isl 8192 "
                   "--osl 2048 --rate 100"),
      "--decode-workers");
}

TEST(MoeAtScaleCliErrors, BadExchangeAndPlacementAreOneLine) {
  const std::string moe =
      "explain --model deepseek-v3 --cluster hgx-h800 --nodes 4 "
      "--layout dp32ep32 ";
  ExpectOneLineError(RunShardwise(moe + "--ep-algorithm fastest"), "EP algorithm");
  ExpectOneLineError(RunShardwise(moe + "--ep-dispatch-dtype fp4"), "--ep-dispatch-dtype");
  ExpectOneLineError(RunShardwise(moe + "--overlap always"), "--overlap");
  ExpectOneLineError(RunShardwise(moe + "--capacity-factor 0.5"), "--capacity-factor");
  ExpectOneLineError(RunShardwise(moe + "--expert-load /nonexistent/loads.json"), "loads.json");
  ExpectOneLineError(RunShardwise(moe + "--shared-experts everywhere"), "--shared-experts");
  ExpectOneLineError(RunShardwise("explain --model mixtral-8x7b --layout dp8ep8 "
                                  "--shared-experts routed"),
                     "no shared expert");
  // 256 routed + 1 shared = 257 slots do not divide over ep 32 without copies.
  ExpectOneLineError(RunShardwise(moe + "--shared-experts routed"), "257");
}

}  // namespace
}  // namespace shardwise::testing
