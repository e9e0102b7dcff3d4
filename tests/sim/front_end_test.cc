// The serving front end: a fixed path per request plus the prompts' serial tokenization.
#include "shardwise/sim/front_end.h"

#include <gtest/gtest.h>

namespace shardwise {
namespace {

TEST(FrontEnd, TokenizesOnePromptAtATimeThenAddsThePath) {
  // 2 ms of path, 1 us per prompt token. Two prompts sent together at t = 0 (1,000 and 500
  // tokens): the first is tokenized over [0, 1] ms and visible at 1 + 2 = 3 ms; the second waits
  // for it, is tokenized over [1, 1.5] ms and visible at 3.5 ms. A 100-token prompt sent at 10 ms
  // finds the tokenizer free: 10 + 0.1 + 2 = 12.1 ms.
  FrontEnd f(2e-3, 1e-6);
  EXPECT_NEAR(f.Visible(0, 1000), 3e-3, 1e-15);
  EXPECT_NEAR(f.Visible(0, 500), 3.5e-3, 1e-15);
  EXPECT_NEAR(f.Visible(10e-3, 100), 12.1e-3, 1e-15);
}

TEST(FrontEnd, NoDelaysLeaveTheSendTime) {
  FrontEnd f(0, 0);
  EXPECT_EQ(f.Visible(1.5, 4096), 1.5);
  EXPECT_EQ(f.Visible(1.5, 4096), 1.5);
}

}  // namespace
}  // namespace shardwise
