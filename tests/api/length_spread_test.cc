// How request lengths spread (api/options.h): the one resolver plan, recommend, price and
// simulate share, and the longest request a spread draws.
#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "shardwise/api/options.h"

namespace shardwise::api {
namespace {

TEST(LengthSpread, ResolvesEachDistributionAndTheCv) {
  const StatusOr<LengthSpread> fixed = ResolveLengthSpread({});
  ASSERT_TRUE(fixed.ok()) << fixed.status().message();
  EXPECT_TRUE(fixed->Fixed());
  const StatusOr<LengthSpread> s = ResolveLengthSpread({"uniform", "lognormal", 0.3});
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->input, LengthDistribution::kUniform);
  EXPECT_EQ(s->output, LengthDistribution::kLognormal);
  EXPECT_EQ(s->cv, 0.3);
  EXPECT_FALSE(s->Fixed());
  // No CV given: simulate's default, 0.5.
  EXPECT_EQ(ResolveLengthSpread({"fixed", "lognormal", std::nullopt})->cv, 0.5);
}

TEST(LengthSpread, BadSpreadNamesItsField) {
  const auto field = [](const LengthSpreadRequest& r) {
    return std::string(ResolveLengthSpread(r).status().field());
  };
  EXPECT_EQ(field({"gaussian", "fixed", std::nullopt}), "isl_dist");
  EXPECT_EQ(field({"fixed", "normal", std::nullopt}), "osl_dist");
  EXPECT_EQ(field({"fixed", "fixed", 0.2}), "length_cv");  // would spread nothing
  EXPECT_EQ(field({"fixed", "uniform", -0.1}), "length_cv");
  EXPECT_EQ(field({"fixed", "uniform", 10.5}), "length_cv");
  EXPECT_EQ(field({"fixed", "uniform", std::numeric_limits<double>::quiet_NaN()}), "length_cv");
}

TEST(LengthSpread, LongestDrawnIsFourTimesOnePlusTheCvOfTheMean) {
  // The simulator's bound on a drawn request (sim/serving.cc, LongestRequest): 4 (1 + CV) x the
  // mean request. By hand: 4 x 1.5 x (1,000 + 200) = 7,200 tokens.
  EXPECT_EQ(
      LongestDrawn(1000, 200, {LengthDistribution::kFixed, LengthDistribution::kLognormal, 0.5}),
      7200);
  EXPECT_EQ(LongestDrawn(1000, 200, {}), 0);  // fixed lengths: the request itself
}

}  // namespace
}  // namespace shardwise::api
