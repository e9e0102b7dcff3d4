#include "shardwise/price/price.h"

#include <fmt/format.h>

#include <cmath>

namespace shardwise {
namespace {

constexpr double kSecondsPerHour = 3600.0;
constexpr double kMillion = 1e6;

double UsdPerS(const PriceInputs& in) {
  return in.usd_per_gpu_hour / kSecondsPerHour * static_cast<double>(in.gpus_per_replica);
}

}  // namespace

double UsdPerMtok(double usd_per_hour, double output_tokens_per_s) {
  if (!(output_tokens_per_s > 0)) return 0.0;
  return usd_per_hour / kSecondsPerHour / output_tokens_per_s * kMillion;
}

PricePoint PriceAt(const PriceInputs& in, double utilization) {
  PricePoint p;
  p.utilization = utilization;
  const double usd_per_s = UsdPerS(in);
  // Tokens produced per second of wall time shrink with utilisation; the bill does not.
  p.usd_per_mtok_output =
      UsdPerMtok(usd_per_s * kSecondsPerHour, in.replica_output_tokens_per_s * utilization);
  p.usd_per_mtok_input_share =
      usd_per_s * in.input_time_share / (in.replica_input_tokens_per_s * utilization) * kMillion;
  p.usd_per_mtok_output_share = usd_per_s * (1.0 - in.input_time_share) /
                                (in.replica_output_tokens_per_s * utilization) * kMillion;
  return p;
}

double DutyCycleMultiplier(double duty_cycle) { return 1.0 / duty_cycle; }

BreakEven BreakEvenUtilization(const PriceInputs& in, double duty_cycle,
                               std::optional<double> api_input, std::optional<double> api_output) {
  // At utilisation u and duty cycle d the bill is paid for every hour but tokens come only
  // u x d of the time: cost = full-load cost / (u d); equal to the API's price at u = full / (api
  // d).
  const PricePoint full = PriceAt(in, 1.0);
  BreakEven b;
  if (api_input) b.input = full.usd_per_mtok_input_share / (*api_input * duty_cycle);
  if (api_output) b.output = full.usd_per_mtok_output_share / (*api_output * duty_cycle);
  if (api_input && api_output) {
    // API charge per second of full-load work: in_rate x p_in + out_rate x p_out (per token).
    const double api_usd_per_s = (in.replica_input_tokens_per_s * *api_input +
                                  in.replica_output_tokens_per_s * *api_output) /
                                 kMillion;
    b.bill = UsdPerS(in) / (api_usd_per_s * duty_cycle);
  }
  return b;
}

StatusOr<DemandSizing> SizeForDemand(const PriceInputs& in, double output_tokens_per_s,
                                     double target_utilization) {
  constexpr double kMaxReplicas = 1e6;  // beyond any deployment; the demand is a typo
  if (!(target_utilization > 0 && target_utilization <= 1)) {
    return FieldError(
        "target_utilization",
        fmt::format("`target_utilization` must be in (0, 1], got {:g}", target_utilization));
  }
  const double replicas =
      std::ceil(output_tokens_per_s / (in.replica_output_tokens_per_s * target_utilization));
  if (!(output_tokens_per_s > 0) || !(replicas <= kMaxReplicas)) {
    return FieldError(
        "demand_tokens_per_s",
        fmt::format("a demand of {:g} output tokens/s at a target utilisation of {:g} needs "
                    "{:.3g} replicas of this deployment, more than {:g}: give a demand up to "
                    "{:.3g} tokens/s, or raise `target_utilization`",
                    output_tokens_per_s, target_utilization, replicas, kMaxReplicas,
                    kMaxReplicas * in.replica_output_tokens_per_s * target_utilization));
  }
  DemandSizing d;
  d.demand_output_tokens_per_s = output_tokens_per_s;
  d.target_utilization = target_utilization;
  d.replicas = static_cast<int64_t>(replicas);
  d.gpus = d.replicas * in.gpus_per_replica;
  d.utilization =
      output_tokens_per_s / (static_cast<double>(d.replicas) * in.replica_output_tokens_per_s);
  return d;
}

}  // namespace shardwise
