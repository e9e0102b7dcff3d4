// The run-against-reference check: hand-made runs of 3 sequences, 2 steps, a 3-token vocabulary.
#include "shardwise/runtime/reference_check.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "shardwise/model/catalog.h"
#include "shardwise/runtime/comm/thread_comm.h"

namespace shardwise {
namespace {

TEST(ReferenceCheck, TopTwoMarginByHand) {
  const float row[] = {1.0f, -4.0f, 0.5f};  // (1 - 0.5) / 4
  EXPECT_FLOAT_EQ(TopTwoMargin(row, 3), 0.125f);
  const float tie[] = {2.0f, 2.0f, 0.0f};
  EXPECT_FLOAT_EQ(TopTwoMargin(tie, 3), 0.0f);
}

RunResult Reference() {
  RunResult r;
  r.vocab = 3;
  r.tokens = {{0, 2}, {1, 1}, {2, 0}};
  // Sequence 1's second token was a near tie (margin 0.01); the others were clear.
  r.margins = {{0.5f, 0.5f}, {0.5f, 0.01f}, {0.5f, 0.3f}};
  r.logits = {10, 0, 9, 0, 5, 4.9f, 8, 1, 0};  // last step, max |logit| 10
  return r;
}

TEST(ReferenceCheck, IdenticalRunMatches) {
  const RunResult ref = Reference();
  RunResult run = ref;
  run.logits[0] = 10.1f;  // 0.1 / 10 = 1e-2
  const ReferenceComparison c = CompareWithReference(ref, run, 2e-2);
  EXPECT_EQ(c.compared, 3);
  EXPECT_EQ(c.near_ties, 0);
  EXPECT_EQ(c.diverged, 0);
  EXPECT_NEAR(c.max_relative_error, 1e-2, 1e-7);
  EXPECT_TRUE(c.Matches(2e-2));
  EXPECT_FALSE(c.Matches(5e-3));
}

TEST(ReferenceCheck, NearTieIsCountedAndItsLogitsAreNotCompared) {
  const RunResult ref = Reference();
  RunResult run = ref;
  run.tokens[1][1] = 2;    // took the other of 5 and 4.9 (margin 0.01 <= 2 x 2e-2)
  run.logits[3 + 1] = -7;  // and its logits then differ by 12 / 10: not compared
  const ReferenceComparison c = CompareWithReference(ref, run, 2e-2);
  EXPECT_EQ(c.compared, 2);
  EXPECT_EQ(c.near_ties, 1);
  EXPECT_EQ(c.diverged, 0);
  EXPECT_DOUBLE_EQ(c.max_relative_error, 0);
  EXPECT_TRUE(c.Matches(2e-2));
}

TEST(ReferenceCheck, ClearChoiceThatDiffersFails) {
  const RunResult ref = Reference();
  RunResult run = ref;
  run.tokens[2][1] = 1;  // the reference led by 0.3 of the scale: no rounding swaps that
  const ReferenceComparison c = CompareWithReference(ref, run, 2e-2);
  EXPECT_EQ(c.diverged, 1);
  EXPECT_FALSE(c.Matches(2e-2));
  // With a looser tolerance (2 x 0.2 >= 0.3) the same difference is a near tie.
  EXPECT_EQ(CompareWithReference(ref, run, 0.2).near_ties, 1);
}

TEST(ReferenceCheck, NearTiedExpertChoiceIsCountedAndNotCompared) {
  RunResult ref = Reference();
  ref.router_margins = {0.5f, 0.5f, 0.03f};  // sequence 2 routed a token within 2 x 2e-2
  RunResult run = ref;
  run.logits[6] = 4;  // sequence 2 reached other experts: its logits differ by 4 / 10
  const ReferenceComparison c = CompareWithReference(ref, run, 2e-2);
  EXPECT_EQ(c.compared, 2);
  EXPECT_EQ(c.router_ties, 1);
  EXPECT_EQ(c.diverged, 0);
  EXPECT_TRUE(c.Matches(2e-2));
  // With the CPU's tolerance the same margin is wide: compared, and the difference fails.
  EXPECT_FALSE(CompareWithReference(ref, run, 1e-4).Matches(1e-4));
  // A near-tied route whose logits still agree is compared like any other sequence.
  const ReferenceComparison same = CompareWithReference(ref, ref, 2e-2);
  EXPECT_EQ(same.compared, 3);
  EXPECT_EQ(same.router_ties, 0);
}

// The runner's margins are those of the logits it chose from: at the last step, recomputed
// here from the returned logits.
TEST(ReferenceCheck, RunnerMarginsAreTheChosenLogitsMargins) {
  RunConfig c;
  c.model = LoadModel("tiny-dense").value();
  c.batch = 3;
  c.prompt_tokens = 6;
  c.generate_tokens = 3;
  RunResult r;
  ASSERT_TRUE(RunOnThreads(1, 60, [&](Communicator& w) -> Status {
                SW_ASSIGN_OR_RETURN(r, RunRank(c, w));
                return Status();
              }).ok());
  ASSERT_EQ(r.margins.size(), 3u);
  for (size_t b = 0; b < 3; ++b) {
    ASSERT_EQ(r.margins[b].size(), 3u);
    const float* row = r.logits.data() + b * static_cast<size_t>(r.vocab);
    float best = row[0], second = -1e30f, scale = 0;
    for (int64_t i = 0; i < r.vocab; ++i) scale = std::max(scale, std::fabs(row[i]));
    for (int64_t i = 1; i < r.vocab; ++i) {
      if (row[i] > best) {
        second = best;
        best = row[i];
      } else if (row[i] > second) {
        second = row[i];
      }
    }
    EXPECT_NEAR(r.margins[b][2], (best - second) / scale, 1e-6) << "sequence " << b;
  }
}

}  // namespace
}  // namespace shardwise
