// recommend's ranking and how far an answer's latencies reach within their stated bands,
// checked by hand.
#include "shardwise/plan/recommend.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace shardwise
