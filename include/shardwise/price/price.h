// Economics of a deployment (seed 003): a GPU is a fixed cost, so the price of a token is the
// hourly bill divided by the tokens the GPUs actually produce. Cost per million input and
// output tokens against utilisation, the effect of a duty cycle, break-even utilisation
// against an API price, and sizing by sustained demand. Pure functions.
#pragma once

#include <cstdint>
#include <vector>

#include "shardwise/common/status.h"
#include "shardwise/perf/step.h"

namespace shardwise {

struct PriceInputs {
  double usd_per_gpu_hour = 0;
  int64_t gpus_per_replica = 1;
  double replica_output_tokens_per_s = 0;  // at full utilisation
  double replica_input_tokens_per_s = 0;
  double input_time_share = 0;  // fraction of GPU time spent on prefill (input tokens)
};

struct PricePoint {
  double utilization = 0;
  double usd_per_mtok_input = 0;
  double usd_per_mtok_output = 0;
};

struct DemandSizing {
  double demand_output_tokens_per_s = 0;
  int64_t replicas = 0;
  int64_t gpus = 0;
  double utilization = 0;  // demand / capacity of those replicas
};

// Prefill and decode shares of a replica's time from a step estimate at its batch.
PriceInputs PriceInputsFrom(const StepEstimate& estimate, double usd_per_gpu_hour);

// Cost per million tokens when the GPUs are busy `utilization` of the time (0, 1].
PricePoint PriceAt(const PriceInputs& in, double utilization);
// Duty cycle d multiplies the cost by 1/d (seed 003: 40% -> 2.5x).
double DutyCycleMultiplier(double duty_cycle);
// Utilisation at which self-hosting matches an API's price per million output tokens; > 1
// means it never does.
double BreakEvenUtilization(const PriceInputs& in, double api_usd_per_mtok_output);
// Replicas (and GPUs) that serve a sustained output rate, and how busy they run; an error when
// the demand needs more than a million replicas.
StatusOr<DemandSizing> SizeForDemand(const PriceInputs& in, double output_tokens_per_s);

}  // namespace shardwise
