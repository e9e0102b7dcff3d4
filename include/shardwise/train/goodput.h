// Job goodput: what a training run costs in wall-clock time once interruptions are counted.
// Interruptions (failures and maintenance) arrive at a rate per GPU-hour, so a job of N GPUs is
// interrupted every 1 / (N x rate) hours; each costs a restart and the work since the last
// checkpoint (half an interval on average); checkpoints stall training while they are written,
// and are spaced at Young's optimum, sqrt(2 x write time x mean time between interruptions)
// (J. W. Young, "A first order approximation to the optimum checkpoint interval", CACM 1974).
// Wall time W then solves W = C + floor(C / interval) x write + (W / MTBI) (restart + interval / 2)
// for C the uninterrupted compute time (a run shorter than the interval writes no checkpoint).
// Value types; pure functions.
#pragma once

#include "shardwise/common/status.h"
#include "shardwise/train/step.h"

namespace shardwise::train {

// Time, GPU-hours and dollars to train on `tokens` at the estimate's speed, with interruptions.
struct TrainingCost {
  double tokens = 0;
  double steps = 0;                  // whole optimizer steps: tokens / batch, rounded up
  double compute_s = 0;              // steps x step time, uninterrupted
  double checkpoint_write_s = 0;     // one checkpoint's stall
  double checkpoint_interval_s = 0;  // compute between checkpoints
  double interruptions = 0;          // expected over the run
  double lost_s = 0;                 // restarts and re-done work
  double time_s = 0;                 // wall clock
  double goodput = 0;                // compute_s / time_s
  double gpu_hours = 0;
  double usd = 0;
};

// `params` is the model's total parameter count (what a checkpoint holds). Fails when
// interruptions come faster than the job can restart and redo its work.
StatusOr<TrainingCost> CostToTrain(const TrainEstimate& e, const Reliability& reliability,
                                   double params, double usd_per_gpu_hour, double tokens);

}  // namespace shardwise::train
