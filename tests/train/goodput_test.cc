// Job goodput against a hand calculation with Meta's published Llama 3 pre-training figures
// ("The Llama 3 Herd of Models", 2024: 466 job interruptions in 54 days on 16,384 H100 GPUs,
// over 90% effective training time; Tectonic sustaining 2 TB/s) and Young's checkpoint interval.
#include "shardwise/train/goodput.h"

#include <gtest/gtest.h>

#include <cmath>

namespace shardwise::train {
namespace {

TrainEstimate Llama3Step() {
  TrainEstimate e;
  e.layout.tp = 8;
  e.layout.pp = 16;
  e.layout.dp = 128;  // 16,384 GPUs, Meta's 405B layout
  e.config.seq_len = 8192;
  e.config.global_batch = 2048;  // 16.8M tokens per step
  e.step_s = 10;
  return e;
}

// Meta's run: 466 interruptions in 54 days on 16,384 GPUs, 10-minute restarts, 14 bytes per
// parameter of checkpoint written at Tectonic's 2 TB/s.
Reliability Llama3Reliability() {
  Reliability r;
  r.interruptions_per_gpu_hour = 466.0 / (54 * 24 * 16384);
  r.restart_s = 600;
  r.checkpoint_bytes_per_param = 14;
  r.checkpoint_write_bytes_per_s_per_gpu = 2e12 / 16384;
  return r;
}

TEST(Goodput, LlamaThreeInterruptionsAndCheckpoints) {
  const Reliability r = Llama3Reliability();
  const double params = 405e9, tokens = 15.6e12;
  const TrainingCost c = CostToTrain(Llama3Step(), r, params, 3.0, tokens).value();
  // Hand calculation: steps = 15.6e12 / (8192 x 2048) = 929,832.3, so 929,833 whole steps;
  // compute = 10 s each.
  const double steps = 929'833;
  EXPECT_EQ(c.steps, steps);
  EXPECT_NEAR(c.compute_s, 10 * steps, 1e-6 * c.compute_s);
  // Interruptions every 54 days / 466 = 10,012 s on the whole job. Checkpoint: 405e9 x 14 B
  // written at 2 TB/s = 2.835 s. Young's interval sqrt(2 x 2.835 x 10,012) = 238.3 s.
  const double mtbi = 54.0 * 24 * 3600 / 466;
  const double write = 405e9 * 14 / 2e12;
  EXPECT_NEAR(c.checkpoint_write_s, write, 1e-9 * write);
  EXPECT_NEAR(c.checkpoint_interval_s, std::sqrt(2 * write * mtbi), 1e-6);
  // Wall = (compute + floor(compute / interval) x write) / (1 - (restart + interval / 2) / MTBI).
  const double interval = std::sqrt(2 * write * mtbi);
  const double wall = (c.compute_s + std::floor(c.compute_s / interval) * write) /
                      (1 - (600 + interval / 2) / mtbi);
  EXPECT_NEAR(c.time_s, wall, 1e-6 * wall);
  EXPECT_NEAR(c.interruptions, wall / mtbi, 1e-6 * c.interruptions);
  // Meta: "higher than 90% effective training time".
  EXPECT_GT(c.goodput, 0.90);
  EXPECT_LT(c.goodput, 0.95);
  EXPECT_NEAR(c.gpu_hours, wall * 16384 / 3600, 1e-6 * c.gpu_hours);
  EXPECT_NEAR(c.usd, 3.0 * c.gpu_hours, 1e-6 * c.usd);
}

TEST(Goodput, ABudgetUnderOneBatchCostsOneStep) {
  // 1,000 tokens against a batch of 8,192 x 2,048: one step of 10 s, not zero.
  const TrainingCost c = CostToTrain(Llama3Step(), Reliability{}, 405e9, 3.0, 1000).value();
  EXPECT_EQ(c.steps, 1);
  EXPECT_DOUBLE_EQ(c.compute_s, 10);
  EXPECT_GT(c.usd, 0);
}

TEST(Goodput, ARunShorterThanTheCheckpointIntervalWritesNone) {
  // One step of 10 s against Llama 3's 238 s interval: no checkpoint stall, so the only loss is
  // the expected interruptions': each a 600-s restart and the work since the start, 10 s / 2 on
  // average (not half the 238-s interval: the run never reaches it).
  const TrainingCost c = CostToTrain(Llama3Step(), Llama3Reliability(), 405e9, 3.0, 1000).value();
  const double mtbi = 54.0 * 24 * 3600 / 466;
  EXPECT_NEAR(c.time_s, 10 / (1 - (600 + 10.0 / 2) / mtbi), 1e-9);
}

TEST(Goodput, NoInterruptionsNoLoss) {
  const TrainingCost c = CostToTrain(Llama3Step(), Reliability{}, 405e9, 3.0, 1e12).value();
  EXPECT_DOUBLE_EQ(c.time_s, c.compute_s);
  EXPECT_DOUBLE_EQ(c.goodput, 1.0);
  EXPECT_DOUBLE_EQ(c.interruptions, 0.0);
}

TEST(Goodput, InterruptionsFasterThanRestartsFail) {
  // One interruption per GPU-hour on 16,384 GPUs: every 0.22 s, far under a 10-minute restart.
  Reliability r;
  r.interruptions_per_gpu_hour = 1;
  r.restart_s = 600;
  const auto c = CostToTrain(Llama3Step(), r, 405e9, 3.0, 1e12);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("would not progress"), std::string::npos);
  // The restart alone can be the cause: the error names its option too.
  EXPECT_NE(c.status().message().find("--restart-s"), std::string::npos);
}

}  // namespace
}  // namespace shardwise::train
