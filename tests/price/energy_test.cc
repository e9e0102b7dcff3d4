// Energy per token and its electricity price (price/energy.h), by hand.
#include "shardwise/price/energy.h"

#include <gtest/gtest.h>

namespace shardwise {
namespace {

TEST(Energy, JoulesPerTokenByHand) {
  // Eight 700 W boards (5,600 W) producing 2,800 output tokens/s: 5,600 J/s / 2,800 tok/s = 2 J.
  EXPECT_DOUBLE_EQ(JoulesPerToken(8 * 700.0, 2800.0), 2.0);
  // Unknown power or no tokens: no figure rather than an infinity.
  EXPECT_EQ(JoulesPerToken(0, 2800.0), 0.0);
  EXPECT_EQ(JoulesPerToken(5600.0, 0), 0.0);
}

TEST(Energy, ElectricityPerMillionTokensByHand) {
  // 2 J per token x 1e6 tokens = 2e6 J = 2e6 / 3.6e6 kWh = 0.5556 kWh; at $0.12/kWh, $0.0667.
  EXPECT_NEAR(ElectricityUsdPerMtok(2.0, 0.12), 2e6 / 3.6e6 * 0.12, 1e-15);
  EXPECT_NEAR(ElectricityUsdPerMtok(2.0, 0.12), 0.0667, 1e-4);
}

}  // namespace
}  // namespace shardwise
