// How request lengths spread (api/options.h): the one resolver plan, recommend, price and
// simulate share, and the longest request a spread draws.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <string>

#include "shardwise/api/options.h"
#include "shardwise/sim/workload.h"

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
  // A uniform length spans mean x (1 +- sqrt(3) CV): past 1 / sqrt(3) = 0.577 it would start below
  // zero. A lognormal takes any CV up to 10.
  EXPECT_EQ(field({"uniform", "fixed", 0.58}), "length_cv");
  EXPECT_TRUE(ResolveLengthSpread({"fixed", "uniform", 0.577}).ok());
  EXPECT_TRUE(ResolveLengthSpread({"lognormal", "fixed", 2.0}).ok());
}

TEST(LengthSpread, DrawnLengthsReachTheirDocumentedLongest) {
  // The documented reach of a spread (sim/serving.h), each length on its own. By hand, a
  // lognormal prompt of 1,000 tokens at CV 0.5 (4 x 1.5 x 1,000 = 6,000) with fixed 200-token
  // outputs: 6,200 in all.
  EXPECT_EQ(
      DrawnLengths(1000, 200, {LengthDistribution::kLognormal, LengthDistribution::kFixed, 0.5})
          .Longest(),
      6200);
  // A uniform length reaches its top: 1,000 x (1 + sqrt(3) x 0.5) = 1,866 prompt tokens and
  // 200 x 1.866 = 373 output tokens, 2,239 in all.
  EXPECT_EQ(
      DrawnLengths(1000, 200, {LengthDistribution::kUniform, LengthDistribution::kUniform, 0.5})
          .Longest(),
      2239);
  EXPECT_EQ(DrawnLengths(1000, 200, {}).Longest(), 1200);  // fixed: the request itself
}

TEST(LengthSpread, TheGeneratorRarelyDrawsBeyondTheReach) {
  // Against the simulator's own sampler: of 200,000 lognormal prompts at CV 0.5, the share past
  // 6x the mean is the normal tail beyond z = (ln 6 + ln(1.25) / 2) / sqrt(ln 1.25) = 4.03,
  // 2.8e-5 (by hand); a uniform one at CV 0.5 never passes 1 + sqrt(3) / 2 = 1.87x its mean.
  const int64_t n = 200'000;
  RequestSource lognormal(ArrivalSpec{}, {LengthDistribution::kLognormal, 1000, 0.5},
                          {LengthDistribution::kFixed, 1, 0.5}, n, 7);
  RequestSource uniform(ArrivalSpec{}, {LengthDistribution::kUniform, 1000, 0.5},
                        {LengthDistribution::kFixed, 1, 0.5}, n, 7);
  // The reach of the prompt: the longest request less its one output token.
  const int64_t reach =
      DrawnLengths(1000, 1, {LengthDistribution::kLognormal, LengthDistribution::kFixed, 0.5})
          .Longest() -
      1;
  int64_t beyond = 0, uniform_max = 0;
  while (const auto r = lognormal.Next()) beyond += r->input_tokens > reach;
  while (const auto r = uniform.Next()) uniform_max = std::max(uniform_max, r->input_tokens);
  EXPECT_LT(beyond, 30);  // 5.6 expected; 30 is beyond any plausible draw of a 2.8e-5 tail
  EXPECT_LE(uniform_max, 1866);
}

}  // namespace
}  // namespace shardwise::api
