// Pipeline schedules: the bubble each leaves and how many micro-batches' activations the first
// stage holds at its peak. Formulas from Narayanan et al. (SC21, arXiv:2104.04473): 1F1B's
// bubble is (p - 1) / m of the ideal time, interleaving over V model chunks divides it by V;
// the first stage holds p micro-batches under 1F1B and p (1 + (p - 1) / (p V)) stage-equivalents
// under interleaving (Korthikanti et al., arXiv:2205.05198). The zero-bubble schedule (Qi et al.,
// ICLR 2024, ZB-V) fills the bubble with split weight-gradient work at 1F1B's activation memory.
// Pure functions.
#pragma once

#include <cstdint>

#include "shardwise/common/status.h"
#include "shardwise/train/options.h"

namespace shardwise::train {

// Bubble time over ideal time for `pp` stages and `micro_batches` per pipeline.
double BubbleFraction(const Schedule& schedule, int64_t pp, int64_t micro_batches);

// Micro-batches of the first stage's layers whose activations are alive at once.
double InFlightMicroBatches(const Schedule& schedule, int64_t pp, int64_t micro_batches);

// Whether the schedule can run: interleaving needs pp >= 2 and micro-batches divisible by pp
// (Megatron's constraints; how the layers spread over the pp x V model chunks is the pipeline
// split's, pipeline_split.h); zero-bubble needs pp >= 2 and at least pp micro-batches. The error
// names the fix.
Status CheckSchedule(const Schedule& schedule, int64_t pp, int64_t micro_batches);

}  // namespace shardwise::train
