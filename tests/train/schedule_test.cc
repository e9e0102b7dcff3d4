// Pipeline schedules: bubble fractions and in-flight micro-batches against the published formulas.
#include "shardwise/train/schedule.h"

#include <gtest/gtest.h>

namespace shardwise::train {
namespace {

TEST(Schedule, Parses) {
  EXPECT_EQ(ParseSchedule("1f1b")->kind, ScheduleKind::k1F1B);
  EXPECT_EQ(ParseSchedule("interleaved:4")->virtual_stages, 4);
  EXPECT_EQ(ParseSchedule("zero-bubble")->kind, ScheduleKind::kZeroBubble);
  EXPECT_EQ(ParseSchedule("interleaved:4")->ToString(), "interleaved:4");
  EXPECT_FALSE(ParseSchedule("interleaved:1").ok());
  EXPECT_FALSE(ParseSchedule("interleaved:x").ok());
  EXPECT_FALSE(ParseSchedule("gpipe").ok());
}

TEST(Schedule, OneFOneBBubble) {
  // Narayanan et al. (SC21), section 2.2.1: bubble time fraction (p - 1) / m. With p = 4 stages
  // and m = 8 micro-batches: 3 / 8 = 0.375; p = 8, m = 64: 7 / 64 = 0.109375.
  EXPECT_DOUBLE_EQ(BubbleFraction(Schedule{}, 4, 8), 0.375);
  EXPECT_DOUBLE_EQ(BubbleFraction(Schedule{}, 8, 64), 0.109375);
  EXPECT_DOUBLE_EQ(BubbleFraction(Schedule{}, 1, 8), 0.0);
}

TEST(Schedule, InterleavedBubble) {
  // Same paper, section 2.2.2: interleaving v model chunks per device divides the bubble by v:
  // (1 / v) (p - 1) / m. p = 4, m = 8, v = 2: 3 / 16 = 0.1875; v = 4: 3 / 32 = 0.09375.
  EXPECT_DOUBLE_EQ(BubbleFraction({ScheduleKind::kInterleaved, 2}, 4, 8), 0.1875);
  EXPECT_DOUBLE_EQ(BubbleFraction({ScheduleKind::kInterleaved, 4}, 4, 8), 0.09375);
  EXPECT_DOUBLE_EQ(BubbleFraction({ScheduleKind::kZeroBubble, 1}, 4, 8), 0.0);
}

TEST(Schedule, InFlightMicroBatches) {
  // 1F1B: the first stage holds p micro-batches at its peak (at most m). Interleaved:
  // p (1 + (p - 1) / (p v)) stage-equivalents (Korthikanti et al., arXiv:2205.05198,
  // section 4.2.3): p = 4, v = 2: 4 x (1 + 3/8) = 5.5.
  EXPECT_DOUBLE_EQ(InFlightMicroBatches(Schedule{}, 4, 8), 4.0);
  EXPECT_DOUBLE_EQ(InFlightMicroBatches(Schedule{}, 4, 2), 2.0);
  EXPECT_DOUBLE_EQ(InFlightMicroBatches({ScheduleKind::kInterleaved, 2}, 4, 8), 5.5);
  EXPECT_DOUBLE_EQ(InFlightMicroBatches({ScheduleKind::kZeroBubble, 1}, 4, 8), 4.0);
}

TEST(Schedule, Constraints) {
  EXPECT_TRUE(CheckSchedule({ScheduleKind::kInterleaved, 2}, 4, 8).ok());
  // Megatron requires m divisible by p under interleaving; how the layers spread over the
  // model chunks is the pipeline split's (pipeline_split_test.cc).
  EXPECT_FALSE(CheckSchedule({ScheduleKind::kInterleaved, 2}, 4, 6).ok());
  EXPECT_TRUE(CheckSchedule({ScheduleKind::kInterleaved, 5}, 4, 8).ok());
  EXPECT_FALSE(CheckSchedule({ScheduleKind::kInterleaved, 2}, 1, 8).ok());
  EXPECT_FALSE(CheckSchedule({ScheduleKind::kZeroBubble, 1}, 8, 4).ok());
  EXPECT_TRUE(CheckSchedule(Schedule{}, 1, 1).ok());
}

}  // namespace
}  // namespace shardwise::train
