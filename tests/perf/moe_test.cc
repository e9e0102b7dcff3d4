// Expert placement in the step model: redundant experts, routing skew and the busiest EP rank's
// load on expert compute and on the all-to-all, against hand calculations.
#include "shardwise/perf/moe.h"

#include <gtest/gtest.h>

#include <cmath>

#include "perf_models.h"
#include "shardwise/collective/ep_dispatch.h"
#include "shardwise/hw/cluster.h"
#include "shardwise/model/catalog.h"
#include "shardwise/perf/step.h"

namespace shardwise {
namespace {

using testing::Model;

TEST(MoePlacement, DeepSeekV3DecodeUnitHoldsTwoExpertsPerGpu) {
  // DeepSeek's day-6 decode unit: EP144 with 32 redundant experts, (256 + 32) / 144 = 2 slots
  // per GPU. Uniform load: the 32 copies go to experts 0..31 (half a load per copy); packing
  // the heaviest first, 144 whole experts take one rank each, the other 80 fill ranks 0..79 to
  // 2, and the 64 halves go to ranks 80..143 (1.5). Busiest 2 over the mean 256 / 144:
  // 2 x 144 / 256 = 1.125.
  const ModelSpec m = Model("deepseek-v3");
  const ClusterSpec c = WithNodes(LoadCluster("hgx-h800").value(), 18).value();
  const Layout l = ParseLayout("dp144ep144").value();
  PerfOptions o;
  o.redundant_experts = 32;
  auto step = StepModel::Create(m, c, l, o);
  ASSERT_TRUE(step.ok()) << step.status().message();
  EXPECT_DOUBLE_EQ(step->shard().experts_per_gpu, 2.0);
  EXPECT_NEAR(step->shard().expert_placement_imbalance, 1.125, 1e-12);
  // Without the copies ep144 does not divide 256 experts; 31 copies make 287 slots.
  const auto plain = StepModel::Create(m, c, l, PerfOptions{});
  ASSERT_FALSE(plain.ok());
  EXPECT_NE(plain.status().message().find("--redundant-experts"), std::string::npos);
  o.redundant_experts = 31;
  EXPECT_FALSE(StepModel::Create(m, c, l, o).ok());
}

TEST(MoePlacement, ZipfSkewOnOneExpertPerRank) {
  // Mixtral's 8 experts at Zipf s = 1: loads 1, 1/2, ..., 1/8, sum H8 = 761/280. One expert per
  // rank on ep8, so the busiest rank holds expert 0: 1 / (H8 / 8) = 2240 / 761.
  EXPECT_NEAR(PlacementImbalance(8, 8, 0, ZipfExpertLoads(8, 1.0)), 2240.0 / 761.0, 1e-12);
  EXPECT_DOUBLE_EQ(PlacementImbalance(8, 8, 0, ZipfExpertLoads(8, 0.0)), 1.0);
}

TEST(MoePlacement, BusiestRankLoadsExpertComputeAndAllToAll) {
  // Mixtral dp8ep8 on one DGX H100, decode at batch 256 with Zipf s = 1. The group's 256 tokens
  // x top-2 = 512 pairs, 64 per rank on average. Placement p = 2240/761 = 2.943495; sampling tail
  // sqrt(2 p ln 8 / 64) = 0.437351; busiest rank 3.380846 x the mean (below the cap 8 / 2 = 4).
  const ModelSpec m = Model("mixtral-8x7b");
  const ClusterSpec c = LoadCluster("dgx-h100").value();
  const Layout l = ParseLayout("dp8ep8").value();
  PerfOptions o;
  o.expert_skew = 1.0;
  auto step = StepModel::Create(m, c, l, o);
  ASSERT_TRUE(step.ok()) << step.status().message();
  const double p = 2240.0 / 761.0;
  const double busiest = p + std::sqrt(2.0 * p * std::log(8.0) / 64.0);
  EXPECT_NEAR(busiest, 3.380846, 1e-6);
  // Expert compute: rows per expert slot on the busiest rank = 512 / 8 slots x 3.380846.
  const ExpertLoad load = EstimateExpertLoad(m.moe, step->shard(), 256, 8, 0);
  EXPECT_NEAR(load.imbalance, busiest, 1e-12);
  EXPECT_NEAR(load.rows_per_expert, 64.0 * busiest, 1e-9);
  // All-to-all: each of the 8 ranks' 32 tokens x 4096 hidden x 2 bytes, times the busiest
  // rank's load, dispatched and combined by NCCL's all-to-all (the flat algorithm); 32 MoE
  // layers.
  Workload w;
  w.batch = 256;
  w.prompt_tokens = 1024;
  w.decode_context_tokens = 1024;
  const StepEstimate e = step->Estimate(w);
  EpDispatchRequest r;
  r.tokens_per_gpu = 32.0 * busiest;
  r.hidden = 4096;
  r.routing = {8, 2, 1, 1};
  r.algorithm = EpAlgorithm::kFlat;
  const GroupShape ep_group = PlaceGroup(c, 8, l.EpStride()).value();
  const double flat_s = PredictEpDispatch(c, ep_group, EpKernelProfile{}, r).time_s;
  EXPECT_NEAR(e.decode.ep_comm_s, 32 * 2 * flat_s, 1e-12);
}

}  // namespace
}  // namespace shardwise
