// The EP exchange, two-batch overlap, capacity factor and measured expert loads in the step
// model, against hand calculations.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "shardwise/collective/cost_model.h"
#include "shardwise/collective/group.h"
#include "shardwise/hw/cluster.h"
#include "shardwise/model/catalog.h"
#include "shardwise/perf/expert_loads.h"
#include "shardwise/perf/moe.h"
#include "shardwise/perf/overlap.h"
#include "shardwise/perf/step.h"
#include "shardwise/plan/planner.h"

namespace shardwise {
namespace {

ModelSpec Model(const std::string& name) { return LoadModel(name).value(); }

TEST(EpExchange, LowLatencyDecodeOnEightH800NodesByHand) {
  // DeepSeek-V3 dp64ep64 on 8 HGX H800 nodes, decode at 128 sequences per GPU, busiest rank at
  // the mean (imbalance pinned to 1). Low-latency kernels send one copy per selected expert:
  // k = 8 copies, 7 of every 64 ranks are NVLink peers and 56 are remote.
  //   dispatch (fp8 + one fp32 scale per 128): 128 x 7168 x (1 + 4/128) = 946,176 B per copy set
  //     NIC:    946,176 x 8 x 56/64 = 6,623,232 B over 50 GB/s x 0.873 = 151.735 us
  //     NVLink: 946,176 x 8 x 7/64  =   827,904 B over 200 GB/s x 0.68 =   6.088 us
  //     time = 10 us + 151.735 us
  //   combine (bf16): 128 x 7168 x 2 = 1,835,008 B; NIC 12,845,056 B -> 294.275 us, + 10 us
  // 58 MoE layers (61 layers, the first 3 dense).
  const ModelSpec m = Model("deepseek-v3");
  const ClusterSpec c = WithNodes(LoadCluster("hgx-h800").value(), 8).value();
  ASSERT_DOUBLE_EQ(c.PerGpuEgressBytesPerS(1), 50e9);
  ASSERT_DOUBLE_EQ(c.PerGpuEgressBytesPerS(0), 200e9);
  PerfOptions o;
  o.ep.algorithm = EpAlgorithm::kLowLatency;
  o.ep.dispatch_dtype = Dtype::kFp8;
  o.expert_imbalance = 1.0;
  auto step = StepModel::Create(m, c, ParseLayout("dp64ep64").value(), o);
  ASSERT_TRUE(step.ok()) << step.status().message();
  Workload w;
  w.batch = 128 * 64;
  w.prompt_tokens = 1024;
  w.decode_context_tokens = 2048;
  const StepEstimate e = step->Estimate(w);
  const double dispatch_s = 10e-6 + 946'176.0 * 8 * 56 / 64 / (50e9 * 0.873);
  const double combine_s = 10e-6 + 1'835'008.0 * 8 * 56 / 64 / (50e9 * 0.873);
  EXPECT_NEAR(dispatch_s, 161.735e-6, 1e-9);
  EXPECT_NEAR(e.decode.ep_comm_s, 58 * (dispatch_s + combine_s), 1e-12);
  ASSERT_TRUE(e.decode.ep_algorithm.has_value());
  EXPECT_EQ(*e.decode.ep_algorithm, EpAlgorithm::kLowLatency);
}

TEST(EpExchange, ExpertTpOverAttentionDpGathersTokens) {
  // Qwen3-235B (94 MoE layers, hidden 4,096, 128 experts of FFN width 1,536) as dp8ep4etp2 on
  // one 8-GPU H100 node, decode at 64 sequences per attention rank, busiest expert at the mean.
  // Each MoE layer all-gathers the 8 ranks' tokens, 8 x 64 x 4,096 bf16 values = 4,194,304 B of
  // output, and reduce-scatters as many back (TensorRT-LLM and SGLang under attention DP); no
  // all-to-all. Each GPU holds 128 / 4 = 32 experts, each half of its FFN: 16 experts' weights,
  // as dp8ep8's 128 / 8.
  const ModelSpec m = Model("qwen3-235b-a22b");
  const ClusterSpec c = LoadCluster("dgx-h100").value();
  PerfOptions o;
  o.expert_imbalance = 1.0;
  const Layout split = ParseLayout("dp8ep4etp2").value();
  auto step = StepModel::Create(m, c, split, o);
  ASSERT_TRUE(step.ok()) << step.status().message();
  Workload w;
  w.batch = 8 * 64;
  w.prompt_tokens = 1024;
  w.decode_context_tokens = 1024;
  const StepEstimate e = step->Estimate(w);
  const GroupShape group = PlaceGroup(c, 8, 1).value();
  CollectiveRequest gather{CollectiveOp::kAllGather, 8.0 * 64 * 4096 * 2};
  CollectiveRequest scatter{CollectiveOp::kReduceScatter, 8.0 * 64 * 4096 * 2};
  const double per_layer_s =
      PredictCollective(c, group, gather).time_s + PredictCollective(c, group, scatter).time_s;
  EXPECT_NEAR(e.decode.ep_comm_s, 94 * per_layer_s, 1e-12);
  EXPECT_FALSE(e.decode.ep_algorithm.has_value()) << "no EP kernels: a gather";
  auto pure = StepModel::Create(m, c, ParseLayout("dp8ep8").value(), o);
  ASSERT_TRUE(pure.ok());
  EXPECT_NEAR(e.memory.weight_bytes, pure->Estimate(w).memory.weight_bytes, 1.0);
  // DeepEP's kernels need expert-TP 1.
  EXPECT_EQ(EpSettingsToTry(m, split, PlanRequest{.search_ep = true}).size(), 1u);
}

TEST(EpExchange, AutoPicksNodeDedupForPrefillAndNeverInsideCudaGraphs) {
  // Prefill across 4 nodes: the normal kernels send each token once per remote node instead of
  // once per expert, so auto takes them; decode runs in CUDA graphs, which they cannot join.
  const ModelSpec m = Model("deepseek-v3");
  const ClusterSpec c = WithNodes(LoadCluster("hgx-h800").value(), 4).value();
  PerfOptions o;
  o.ep.algorithm = EpAlgorithm::kAuto;
  auto step = StepModel::Create(m, c, ParseLayout("dp32ep32").value(), o);
  ASSERT_TRUE(step.ok()) << step.status().message();
  Workload w;
  w.batch = 32 * 64;
  w.prompt_tokens = 4096;
  const StepEstimate e = step->Estimate(w);
  ASSERT_TRUE(e.prefill.ep_algorithm && e.decode.ep_algorithm);
  EXPECT_EQ(*e.prefill.ep_algorithm, EpAlgorithm::kNodeDedup);
  EXPECT_NE(*e.decode.ep_algorithm, EpAlgorithm::kNodeDedup);
}

TEST(TwoBatchOverlap, HidesTheExchangeBehindTheOtherMicroBatchByHand) {
  // One micro-batch over 4 MoE layers: 20 us of work and 48 us of exchange in all (5 and 12 per
  // layer), plus 6 us outside the MoE layers; the exchange kernels hold 20 of 132 SMs.
  //   work per layer while they run: 5 / (1 - 20/132) = 5.892857 us
  //   MoE layers: 4 x max(2 x 5.892857, 2 x 12) + min(5.892857, 12) = 101.892857 us
  //   total: 2 x 6 + 101.892857 = 113.892857 us, of which the exchange left exposed is
  //   101.892857 - 8 x 5.892857 = 54.75 us.
  MicroBatchPass pass;
  pass.breakdown.compute_s = 26e-6;
  pass.breakdown.ep_comm_s = 48e-6;
  pass.breakdown.total_s = 74e-6;
  pass.moe_work_s = 20e-6;
  pass.moe_layers = 4;
  const PhaseBreakdown out = TwoBatchOverlap(pass, 20.0 / 132.0);
  const double work = 5e-6 / (1.0 - 20.0 / 132.0);
  EXPECT_NEAR(work, 5.892857e-6, 1e-12);
  EXPECT_NEAR(out.total_s, 12e-6 + 4 * 24e-6 + work, 1e-15);
  EXPECT_NEAR(out.ep_comm_s, 96e-6 + work - 8 * work, 1e-15);
  EXPECT_NEAR(out.compute_s, 52e-6 + 8 * work - 40e-6, 1e-15);
  EXPECT_TRUE(out.two_batch_overlap);
}

TEST(TwoBatchOverlap, PaysWhenTheExchangeBindsAndCostsWhenWeightsDo) {
  // DeepSeek-V3 decode on 8 H800 nodes, dp64ep64, low-latency kernels (no SMs held): at 128
  // sequences per GPU the exchange over the NICs dominates and overlap hides most of it; at 2
  // sequences per GPU the step reads weights, and two micro-batches read them twice.
  const ModelSpec m = Model("deepseek-v3");
  const ClusterSpec c = WithNodes(LoadCluster("hgx-h800").value(), 8).value();
  const Layout l = ParseLayout("dp64ep64").value();
  PerfOptions o;
  o.ep.algorithm = EpAlgorithm::kLowLatency;
  o.ep.dispatch_dtype = Dtype::kFp8;
  PerfOptions tbo = o;
  tbo.ep.two_batch_overlap = true;
  const StepModel plain = StepModel::Create(m, c, l, o).value();
  const StepModel overlapped = StepModel::Create(m, c, l, tbo).value();
  Workload w;
  w.prompt_tokens = 1024;
  w.decode_context_tokens = 2048;
  w.batch = 128 * 64;
  const StepEstimate big_plain = plain.Estimate(w);
  const StepEstimate big_tbo = overlapped.Estimate(w);
  EXPECT_TRUE(big_tbo.decode.two_batch_overlap);
  EXPECT_LT(big_tbo.tpot_s, big_plain.tpot_s);
  EXPECT_LT(big_tbo.decode.ep_comm_s, 0.5 * big_plain.decode.ep_comm_s);
  w.batch = 2 * 64;
  EXPECT_GT(overlapped.Estimate(w).decode.memory_s, 1.5 * plain.Estimate(w).decode.memory_s);
}

TEST(CapacityFactor, CapsTheBusiestRankAndReportsWhatItDrops) {
  // Mixtral dp8ep8 at batch 256 with Zipf s = 1: the busiest rank would take 3.380846 x the
  // mean (tests/perf/moe_test.cc works it out); capacity 2 caps it at 2 and drops
  // 1 - 2 / 3.380846 = 40.84% of its pairs.
  const ModelSpec m = Model("mixtral-8x7b");
  PerfOptions o;
  o.expert_skew = 1.0;
  const ClusterSpec c = LoadCluster("dgx-h100").value();
  const StepModel step = StepModel::Create(m, c, ParseLayout("dp8ep8").value(), o).value();
  const ExpertLoad capped = EstimateExpertLoad(m.moe, step.shard(), 256, 8, 0, 2.0);
  EXPECT_DOUBLE_EQ(capped.imbalance, 2.0);
  EXPECT_NEAR(capped.busiest_dropped_share, 1.0 - 2.0 / 3.380846, 1e-6);
  EXPECT_NEAR(capped.rows_per_expert, 64.0 * 2.0, 1e-9);
  const ExpertLoad loose = EstimateExpertLoad(m.moe, step.shard(), 256, 8, 0, 4.0);
  EXPECT_NEAR(loose.imbalance, 3.380846, 1e-6);
  EXPECT_DOUBLE_EQ(loose.busiest_dropped_share, 0.0);
}

TEST(ExpertLoads, MeasuredLoadsSetTheBusiestRankPerLayer) {
  // Mixtral ep8, one expert per rank. Layer 1: loads 8,1,1,1,1,1,1,2 (sum 16, mean 2): the
  // busiest rank takes 8 / 2 = 4 x the mean. Layer 2 uniform: 1. The step pays their mean, 2.5.
  const ModelSpec m = Model("mixtral-8x7b");
  const auto loads = ParseExpertLoads(
      nlohmann::json::parse("[[8,1,1,1,1,1,1,2],[3,3,3,3,3,3,3,3]]"), "loads.json", 8);
  ASSERT_TRUE(loads.ok()) << loads.status().message();
  PerfOptions o;
  o.expert_loads = *loads;
  const ModelShard s = ShardModel(m, ParseLayout("dp8ep8").value(), o);
  EXPECT_DOUBLE_EQ(s.expert_placement_imbalance, 2.5);
  // One array applies to every layer.
  o.expert_loads = ParseExpertLoads(nlohmann::json::parse("[8,1,1,1,1,1,1,2]"), "l", 8).value();
  EXPECT_DOUBLE_EQ(ShardModel(m, ParseLayout("dp8ep8").value(), o).expert_placement_imbalance, 4.0);
}

TEST(ExpertLoads, BadFilesGetOneLineNamingTheProblem) {
  auto message = [](const char* text) {
    const auto r = ParseExpertLoads(nlohmann::json::parse(text), "loads.json", 4);
    return r.ok() ? std::string("ok") : r.status().message();
  };
  EXPECT_NE(message("[1,2,3]").find("the 4 routed experts"), std::string::npos);
  EXPECT_NE(message("[1,2,3,-1]").find(">= 0"), std::string::npos);
  EXPECT_NE(message("[0,0,0,0]").find("every load is 0"), std::string::npos);
  EXPECT_NE(message("[1,2,\"x\",4]").find("finite number"), std::string::npos);
  EXPECT_NE(message("[[1,2,3,4],[1,2]]").find("layer 1"), std::string::npos);
  EXPECT_NE(message("{\"a\":1}").find("expected an array"), std::string::npos);
  EXPECT_EQ(message("[1,2,3,4]"), "ok");
}

}  // namespace
}  // namespace shardwise

namespace shardwise {
namespace {

TEST(SharedExpertsAsRouted, DeepSeekV3DecodesAtEp320WithOneExpertPerGpu) {
  // "DeepSeek-V3 Technical Report" 3.4, decode: EP320 over 40 nodes, one expert per GPU, the
  // shared expert treated as a routed one that every token selects (9 per token), 64 GPUs
  // holding redundant and shared experts. As routed: 256 + 1 = 257 experts, 63 copies make 320
  // slots, 1 per GPU. Loads: a routed expert carries 8/256 = 1/32 of the tokens, the shared one
  // all of them (32x); the copies go to the heaviest load per copy, so the shared expert takes
  // 32 copies (33 in all, 1/33 each) and the other 31 go to routed experts 0..30 (1/64 each).
  // The busiest GPU then holds a routed expert with no copy: 1/32 of the tokens; the mean GPU
  // carries (8 + 1) / 320 = 9/320. Busiest over mean: (1/32) / (9/320) = 10/9.
  const ModelSpec m = LoadModel("deepseek-v3").value();
  const ClusterSpec c = WithNodes(LoadCluster("hgx-h800").value(), 40).value();
  PerfOptions o;
  o.shared_experts_routed = true;
  o.redundant_experts = 63;
  const StepModel step = StepModel::Create(m, c, ParseLayout("dp320ep320").value(), o).value();
  EXPECT_DOUBLE_EQ(step.shard().experts_per_gpu, 1.0);
  EXPECT_NEAR(step.shard().expert_placement_imbalance, 10.0 / 9.0, 1e-12);
  EXPECT_DOUBLE_EQ(step.shard().shared_params, 0.0);  // no replicated shared expert
  // Replicated instead, 64 copies make the 320 slots, and every GPU keeps the shared expert.
  o.shared_experts_routed = false;
  o.redundant_experts = 64;
  const StepModel replicated =
      StepModel::Create(m, c, ParseLayout("dp320ep320").value(), o).value();
  EXPECT_DOUBLE_EQ(replicated.shard().experts_per_gpu, 1.0);
  EXPECT_DOUBLE_EQ(replicated.shard().shared_params, 3.0 * 7168 * 2048);
  // A model without a shared expert cannot place one.
  EXPECT_FALSE(SharedExpertsAsRouted(LoadModel("mixtral-8x7b").value()).ok());
}

}  // namespace
}  // namespace shardwise
