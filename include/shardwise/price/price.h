// Economics of a deployment (Sandesh Bhandari, "multi-gpu scaling is an economics problem"):
// a GPU is a fixed cost, so the price of a token is the
// hourly bill divided by the tokens the GPUs actually produce. Cost per million input and
// output tokens against utilisation, the effect of a duty cycle, break-even utilisation
// against an API price, and sizing by sustained demand. Pure functions.
#pragma once

#include <cstdint>
#include <optional>
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
  // The whole bill over the output tokens (UsdPerMtok): the figure plan, simulate and recommend
  // give for the same deployment and load.
  double usd_per_mtok_output = 0;
  // The bill split by where the GPU time goes (prefill for input tokens, decode for output), to
  // set against an API that prices input and output apart.
  double usd_per_mtok_input_share = 0;
  double usd_per_mtok_output_share = 0;
};

struct DemandSizing {
  double demand_output_tokens_per_s = 0;
  double target_utilization = 1;  // the busiest the replicas may run (1 - headroom)
  int64_t replicas = 0;
  int64_t gpus = 0;
  double utilization = 0;  // demand / capacity of those replicas
};

// Utilisations (during the busy hours, at a duty cycle) at which self-hosting costs what an
// API charges; > 1 means never. Each is absent when its API price was not given.
struct BreakEven {
  std::optional<double> input;   // the input share of the bill against the API's input price
  std::optional<double> output;  // the output share against the API's output price
  // The whole bill against what the API charges for the same input and output tokens (needs
  // both prices): the comparison that decides.
  std::optional<double> bill;
};

// Dollars per million output tokens: the hourly bill of every GPU paid for over the output
// tokens they produce. The one $/Mtok formula of every command (plan, simulate, recommend and
// price's headline figure); 0 when nothing is produced.
double UsdPerMtok(double usd_per_hour, double output_tokens_per_s);

// Cost per million tokens when the GPUs are busy `utilization` of the time (0, 1].
PricePoint PriceAt(const PriceInputs& in, double utilization);
// Duty cycle d multiplies the cost by 1/d (the economics blog: a 40% duty cycle -> ~2.5x).
double DutyCycleMultiplier(double duty_cycle);
// Break-even utilisation during the busy hours when the GPUs have work `duty_cycle` of the
// time (paid for all of it), against the API prices given (per million tokens).
BreakEven BreakEvenUtilization(const PriceInputs& in, double duty_cycle,
                               std::optional<double> api_usd_per_mtok_input,
                               std::optional<double> api_usd_per_mtok_output);
// Replicas (and GPUs) that serve a sustained output rate with each running at most
// `target_utilization` busy (headroom for bursts), and how busy they then run; an error when
// the demand needs more than a million replicas.
StatusOr<DemandSizing> SizeForDemand(const PriceInputs& in, double output_tokens_per_s,
                                     double target_utilization);

}  // namespace shardwise
