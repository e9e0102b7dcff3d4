// JSON of a training plan: each ranked layout's estimate (step, tokens/s per GPU, MFU and HFU,
// memory, the per-phase times, the pipeline split, time and dollars with goodput), the critical
// batch sizes, and the whole plan with the winner's keys at the top level. One conversion per
// result, for every adapter (CLI, future API). Pure functions.
#pragma once

#include <nlohmann/json.hpp>

#include "shardwise/train/planner.h"

namespace shardwise::train {

nlohmann::json PassJson(const PassTimes& p);
nlohmann::json EntryJson(const TrainPlanEntry& entry);
nlohmann::json CriticalJson(const CriticalBatch& c);
// The winner's entry, `critical_batch`, `ranked[]` and `sizes[]` (with `pareto`).
nlohmann::json PlanJson(const TrainPlan& plan);

}  // namespace shardwise::train
