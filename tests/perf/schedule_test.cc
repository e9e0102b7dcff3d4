// The pipeline schedule's bubble against hand calculations.
#include "shardwise/perf/schedule.h"

#include <gtest/gtest.h>

namespace shardwise {
namespace {

TEST(PipelineSchedule, FillAndDrainBubble) {
  // m micro-batches through pp equal stages: (pp - 1) idle stage times in m + pp - 1.
  EXPECT_DOUBLE_EQ(FillDrainBubbleFraction(2, 1), 0.5);
  EXPECT_DOUBLE_EQ(FillDrainBubbleFraction(4, 8), 3.0 / 11.0);
  EXPECT_DOUBLE_EQ(FillDrainBubbleFraction(1, 3), 0.0);
}

TEST(PipelineSchedule, DecodeCycleIdlesWithFewerMicroBatchesThanStages) {
  // 4 equal stages of 1 s, 2 micro-batches: the cycle is 4 s, each stage busy 2 s of it.
  const PipelineCycle c = DecodeCycle(4.0, 1.0, 2.0);
  EXPECT_DOUBLE_EQ(c.cycle_s, 4.0);
  EXPECT_DOUBLE_EQ(c.bubble_s, 2.0);
}

}  // namespace
}  // namespace shardwise
