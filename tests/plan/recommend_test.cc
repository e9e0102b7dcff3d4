// recommend's ranking and how far an answer's latencies reach within their stated bands,
// checked by hand.
#include "shardwise/plan/recommend.h"

#include <gtest/gtest.h>

#include "shardwise/deploy/estimate.h"
#include "shardwise/model/catalog.h"
#include "shardwise/perf/engine.h"

namespace shardwise {
namespace {

TEST(Recommend, RanksFewerGpusFirstThenCheaperOrCheaperAlone) {
  EXPECT_TRUE(RanksBefore(RecommendObjective::kGpus, 4, 30.0, 8, 20.0));
  EXPECT_FALSE(RanksBefore(RecommendObjective::kGpus, 8, 20.0, 4, 30.0));
  EXPECT_TRUE(RanksBefore(RecommendObjective::kGpus, 8, 20.0, 8, 24.0));
  EXPECT_FALSE(RanksBefore(RecommendObjective::kGpus, 8, 24.0, 8, 24.0));
  EXPECT_TRUE(RanksBefore(RecommendObjective::kCost, 8, 20.0, 4, 30.0));
  EXPECT_FALSE(RanksBefore(RecommendObjective::kCost, 4, 30.0, 8, 20.0));
}

TEST(Recommend, ReachWithinBandsScalesThePercentileByTheBandsHighOverTheMean) {
  OperatingPoint p;
  p.ttft = {.mean_s = 0.200, .at_slo_s = 0.300};
  p.tpot = {.mean_s = 0.045, .at_slo_s = 0.0499};
  LoadBands bands;
  bands.ttft.relative = 0.10;  // a band of +-10% around the mean: high = 0.220 s
  bands.tpot.relative = 0.05;  // high = 0.04725 s
  Slo slo;
  slo.max_ttft_s = 1.0;
  slo.max_tpot_s = 0.050;
  const SloReach r = ReachWithinBands(p, bands, slo);
  // By hand: 0.300 x 0.220 / 0.200 = 0.330 s; 0.0499 x 0.04725 / 0.045 = 0.0523950 s.
  EXPECT_NEAR(r.ttft_s, 0.330, 1e-12);
  EXPECT_NEAR(r.tpot_s, 0.052395, 1e-12);
  EXPECT_FALSE(r.holds);  // 52.4 ms is past the 50 ms limit
  slo.max_tpot_s = 0.053;
  EXPECT_TRUE(ReachWithinBands(p, bands, slo).holds);
  // A measured spread of 0.87-1.19x widens the TPOT band's high to 1.19 x the mean.
  bands.tpot.measured = MeasuredRatios{0.87, 1.19};
  EXPECT_NEAR(ReachWithinBands(p, bands, slo).tpot_s, 0.0499 * 1.19, 1e-12);
}

TEST(Recommend, AnUnloadedTtftCountsTheApiServerAsSimulateDoes) {
  // Llama-3.1-8B on one H100 under TensorRT-LLM: the fastest (only) layout's unloaded TTFT is
  // its API server's 2 ms request path and 3.6 us per token of a 1,024-token prompt
  // (data/engines/trtllm-1.0.json), then the prefill the estimate gives; at 1 request/s and an
  // SLO between the prefill alone and that sum, it is missed unloaded, and nothing is simulated.
  const ModelSpec model = LoadModel("llama-3.1-8b").value();
  const ClusterSpec one = WithGpus(LoadCluster("dgx-h100").value(), 1).value();
  RecommendRequest req;
  req.plan.perf.engine = LoadEngine("trtllm-1.0").value();
  req.plan.perf.max_batched_tokens = 1024 + 1500;
  req.plan.max_batch = 2048;
  req.plan.workload.prompt_tokens = 1024;
  req.plan.workload.output_tokens = 256;
  req.max_gpus = 1;
  req.rate_per_s = 1;
  req.disaggregated = false;
  const Deployment d =
      Deployment::Aggregated(model, EnginePool(PoolRole::kAggregated, ParseLayout("tp1").value(), 1,
                                               one, req.plan.perf, req.plan.max_batch))
          .value();
  const double prefill_s = EstimateDeployment(model, d, req.plan.workload).value().unloaded_ttft_s;
  const double front_end_s = 0.002 + 3.6e-6 * 1024;
  req.plan.slo.max_ttft_s = prefill_s + front_end_s / 2;
  req.plan.slo.max_tpot_s = 1;
  const std::vector<NamedCluster> clusters = {{"dgx-h100", LoadCluster("dgx-h100").value(), 1}};
  const Recommendation r = Recommend(model, clusters, req).value();
  EXPECT_NEAR(r.best_unloaded_ttft_s, prefill_s + front_end_s, 1e-9);
  EXPECT_FALSE(r.best.has_value());
  EXPECT_EQ(r.simulations, 0);
}

}  // namespace
}  // namespace shardwise
