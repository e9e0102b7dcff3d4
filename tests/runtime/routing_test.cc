// The MoE router against hand-worked examples: softmax top-k (Mixtral) and DeepSeek-V3's
// sigmoid scores with group-limited selection and the correction bias.
#include "routing.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace shardwise {
namespace {

float Logit(double p) { return static_cast<float>(std::log(p / (1 - p))); }

MoeSpec DeepseekLike() {
  MoeSpec m;
  m.num_experts = 8;
  m.experts_per_token = 2;
  m.num_groups = 4;  // groups {0,1} {2,3} {4,5} {6,7}
  m.groups_per_token = 2;
  m.sigmoid_scores = true;
  m.router_score_bias = true;
  m.routed_scaling_factor = 2.5;
  return m;
}

TEST(Routing, SoftmaxTopKRenormalised) {
  MoeSpec m;
  m.num_experts = 4;
  m.experts_per_token = 2;
  // softmax(ln 1, ln 2, ln 3, ln 4) = (0.1, 0.2, 0.3, 0.4): experts 3 and 2, renormalised to
  // 0.4 / 0.7 and 0.3 / 0.7; without renormalisation 0.4 and 0.3.
  const float logits[4] = {0.0f, std::log(2.0f), std::log(3.0f), std::log(4.0f)};
  const Routes r = RouteTokens(m, true, logits, nullptr, 1);
  ASSERT_EQ(r[0].size(), 2u);
  EXPECT_EQ(r[0][0].first, 3);
  EXPECT_EQ(r[0][1].first, 2);
  EXPECT_NEAR(r[0][0].second, 0.4 / 0.7, 1e-6);
  EXPECT_NEAR(r[0][1].second, 0.3 / 0.7, 1e-6);
  EXPECT_NEAR(RouteTokens(m, false, logits, nullptr, 1)[0][1].second, 0.3, 1e-6);
}

TEST(Routing, GroupLimitedSigmoidWithCorrectionBias) {
  const MoeSpec m = DeepseekLike();
  // Sigmoid scores s; each group's score is the sum of its two best (biased) scores.
  const double s[8] = {0.95, 0.05, 0.6, 0.55, 0.8, 0.7, 0.3, 0.2};
  float logits[8];
  for (int e = 0; e < 8; ++e) logits[e] = Logit(s[e]);
  // No bias: groups 1.0, 1.15, 1.5, 0.5 -> groups 2 and 1 -> experts 4 (0.8) and 5 (0.7), not
  // expert 0 (0.95, in a losing group). Weights 0.8/1.5 and 0.7/1.5, times 2.5.
  const float zero[8] = {};
  Routes r = RouteTokens(m, true, logits, zero, 1);
  EXPECT_EQ(r[0][0].first, 4);
  EXPECT_EQ(r[0][1].first, 5);
  EXPECT_NEAR(r[0][0].second, 0.8 / 1.5 * 2.5, 1e-5);
  EXPECT_NEAR(r[0][1].second, 0.7 / 1.5 * 2.5, 1e-5);
  // Bias -0.6 on expert 5: group 2 drops to 0.8 + 0.1 = 0.9, so groups 1 (1.15) and 0 (1.0)
  // win -> experts 0 and 2, weighted by their unbiased scores 0.95/1.55 and 0.6/1.55, x 2.5.
  const float bias[8] = {0, 0, 0, 0, 0, -0.6f, 0, 0};
  r = RouteTokens(m, true, logits, bias, 1);
  EXPECT_EQ(r[0][0].first, 0);
  EXPECT_EQ(r[0][1].first, 2);
  EXPECT_NEAR(r[0][0].second, 0.95 / 1.55 * 2.5, 1e-5);
  EXPECT_NEAR(r[0][1].second, 0.6 / 1.55 * 2.5, 1e-5);
}

TEST(Routing, MarginsAtTheTopKAndGroupBoundaries) {
  MoeSpec m;
  m.num_experts = 4;
  m.experts_per_token = 2;
  // Softmax routing is decided by the logits: 2nd best 3.0, 3rd 2.5, largest |logit| 4 ->
  // (3.0 - 2.5) / 4 = 0.125.
  const float logits[4] = {-4.0f, 2.5f, 3.0f, 3.5f};
  std::vector<float> margins;
  RouteTokens(m, true, logits, nullptr, 1, &margins);
  ASSERT_EQ(margins.size(), 1u);
  EXPECT_FLOAT_EQ(margins[0], 0.125f);
  // DeepSeek-like, no bias: group scores 1.0, 1.15, 1.5, 0.5 -> the group boundary is
  // (1.15 - 1.0) / 1.5 = 0.1; inside groups 1 and 2 the expert boundary (0.7 - 0.6) / 0.8 =
  // 0.125 is wider, so the margin is 0.1.
  const MoeSpec d = DeepseekLike();
  const double s[8] = {0.95, 0.05, 0.6, 0.55, 0.8, 0.7, 0.3, 0.2};
  float l[8];
  for (int e = 0; e < 8; ++e) l[e] = Logit(s[e]);
  const float zero[8] = {};
  RouteTokens(d, true, l, zero, 1, &margins);
  EXPECT_NEAR(margins[0], 0.1, 1e-5);
}

}  // namespace
}  // namespace shardwise
