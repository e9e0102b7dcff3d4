// Schedules: how the stages of a pipeline share time. Decode splits each attention rank's
// sequences into micro-batches that fill the pipeline (at most pp of them); a cycle gives every
// micro-batch one token, so each must pass every stage in turn and the slowest stage must serve
// all of them; its idle time in the cycle is the bubble (seed: "The Ultra-Scale Playbook",
// pipeline parallelism). Pure functions.
#pragma once

#include <cstdint>

namespace shardwise {

struct MicroBatches {
  double count = 1;  // micro-batches in flight
  double size = 1;   // sequences per micro-batch
};

// Splits `per_rank` sequences over a pipeline of `pp` stages.
MicroBatches DecodeMicroBatches(double per_rank, int64_t pp);

struct PipelineCycle {
  double cycle_s = 0;   // time for every micro-batch to pass every stage once
  double bubble_s = 0;  // idle time of the slowest stage in the cycle
};

// `all_stages_s`: one micro-batch through every stage; `slowest_stage_s`: one micro-batch on
// the slowest stage.
PipelineCycle DecodeCycle(double all_stages_s, double slowest_stage_s, double micro_batches);

// Fill and drain (GPipe; "The Ultra-Scale Playbook", pipeline parallelism): m micro-batches
// through pp equal stages take m + pp - 1 stage times, each stage busy for m of them, so the
// idle share is (pp - 1) / (m + pp - 1).
double FillDrainBubbleFraction(int64_t pp, double micro_batches);

}  // namespace shardwise
