// Economics by hand (Sandesh Bhandari, "multi-gpu scaling is an economics problem").
#include "shardwise/price/price.h"

#include <gtest/gtest.h>

namespace shardwise {
namespace {

PriceInputs Inputs() {
  PriceInputs in;
  in.usd_per_gpu_hour = 3.6;  // $0.001 per GPU-second
  in.gpus_per_replica = 2;    // $0.002 per second
  in.replica_output_tokens_per_s = 1000;
  in.replica_input_tokens_per_s = 4000;
  in.input_time_share = 0.25;
  return in;
}

TEST(Price, FullLoadByHand) {
  // The whole bill over the output tokens: $0.002/s / 1000 tok/s x 1e6 = $2.00 per Mtok, the
  // formula every command uses (UsdPerMtok). Split by GPU time: output $0.002/s x 0.75 / 1000 x
  // 1e6 = $1.50; input 0.002 x 0.25 / 4000 x 1e6 = $0.125 per Mtok.
  const PricePoint p = PriceAt(Inputs(), 1.0);
  EXPECT_NEAR(p.usd_per_mtok_output, 2.00, 1e-12);
  EXPECT_NEAR(UsdPerMtok(2 * 3.6, 1000), 2.00, 1e-12);
  EXPECT_NEAR(p.usd_per_mtok_output_share, 1.50, 1e-12);
  EXPECT_NEAR(p.usd_per_mtok_input_share, 0.125, 1e-12);
}

TEST(Price, HalfUtilisationDoublesTheCost) {
  EXPECT_NEAR(PriceAt(Inputs(), 0.5).usd_per_mtok_output, 4.00, 1e-12);
  EXPECT_NEAR(PriceAt(Inputs(), 0.5).usd_per_mtok_output_share, 3.00, 1e-12);
}

TEST(Price, EconomicsBlogDutyCycle) {
  // The economics blog: a 40% duty cycle makes the true cost per million tokens ~2.5x the
  // benchmark's.
  EXPECT_DOUBLE_EQ(DutyCycleMultiplier(0.4), 2.5);
}

TEST(Price, BreakEvenAgainstAnApi) {
  // Full-load $1.50/Mtok against an API at $3.00 -> break-even at 50% utilisation; against
  // $1.00 -> 150%, never.
  EXPECT_NEAR(*BreakEvenUtilization(Inputs(), 1.0, {}, 3.0).output, 0.5, 1e-12);
  EXPECT_GT(*BreakEvenUtilization(Inputs(), 1.0, {}, 1.0).output, 1.0);
  EXPECT_FALSE(BreakEvenUtilization(Inputs(), 1.0, {}, 3.0).input.has_value());
}

TEST(Price, BreakEvenUsesTheDutyCycle) {
  // Busy half the day, the same $3.00 API: cost per token doubles, so break-even needs 100%
  // utilisation during the busy hours (1.50 / (3.00 x 0.5)).
  EXPECT_NEAR(*BreakEvenUtilization(Inputs(), 0.5, {}, 3.0).output, 1.0, 1e-12);
}

TEST(Price, BreakEvenComparesInputAndOutputAndTheWholeBill) {
  // Input: $0.125 full-load against $0.25 -> 50%. Whole bill: $0.002/s against the API's
  // charge for one full-load second, 4,000 x 0.25e-6 + 1,000 x 3e-6 = $0.004 -> 50%; at a
  // 0.8 duty cycle 0.002 / (0.004 x 0.8) = 62.5%.
  const BreakEven b = BreakEvenUtilization(Inputs(), 1.0, 0.25, 3.0);
  EXPECT_NEAR(*b.input, 0.5, 1e-12);
  EXPECT_NEAR(*b.bill, 0.5, 1e-12);
  EXPECT_NEAR(*BreakEvenUtilization(Inputs(), 0.8, 0.25, 3.0).bill, 0.625, 1e-12);
}

TEST(Price, SizingByDemand) {
  // 4,500 tok/s over 1,000 per replica at up to 100% busy -> 5 replicas = 10 GPUs, 90% utilised.
  const DemandSizing d = SizeForDemand(Inputs(), 4500, 1.0).value();
  EXPECT_EQ(d.replicas, 5);
  EXPECT_EQ(d.gpus, 10);
  EXPECT_NEAR(d.utilization, 0.9, 1e-12);
}

TEST(Price, SizingByDemandKeepsHeadroom) {
  // 4,500 tok/s with replicas at most 80% busy: 4,500 / 800 = 5.6 -> 6 replicas, 75% utilised.
  const DemandSizing d = SizeForDemand(Inputs(), 4500, 0.8).value();
  EXPECT_EQ(d.replicas, 6);
  EXPECT_NEAR(d.utilization, 0.75, 1e-12);
  EXPECT_FALSE(SizeForDemand(Inputs(), 4500, 0).ok());
}

TEST(Price, AbsurdDemandIsAnError) {
  // 1e300 tokens/s over 1,000 per replica is 1e297 replicas: refused, not overflowed.
  auto d = SizeForDemand(Inputs(), 1e300, 1.0);
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.status().message().find("needs 1e+297 replicas"), std::string::npos)
      << d.status().message();
}

}  // namespace
}  // namespace shardwise
