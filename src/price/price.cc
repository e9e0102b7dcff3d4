#include "shardwise/price/price.h"

#include <cmath>

#include <fmt/format.h>

namespace shardwise {
namespace {

constexpr double kSecondsPerHour = 3600.0;
constexpr double kMillion = 1e6;

double UsdPerS(const PriceInputs& in) {
  return in.usd_per_gpu_hour / kSecondsPerHour * static_cast<double>(in.gpus_per_replica);
}

}  // namespace

PriceInputs PriceInputsFrom(const StepEstimate& e, double usd_per_gpu_hour) {
  PriceInputs in;
  in.usd_per_gpu_hour = usd_per_gpu_hour;
  in.gpus_per_replica = e.layout.InstanceGpus();
  const double replicas = static_cast<double>(e.layout.Replicas());
  in.replica_output_tokens_per_s = e.output_tokens_per_s / replicas;
  in.replica_input_tokens_per_s = in.replica_output_tokens_per_s *
                                  static_cast<double>(e.workload.prompt_tokens) /
                                  static_cast<double>(e.workload.output_tokens);
  // A cycle of the batch: each request's prefill, then OSL decode steps (StepEstimate).
  const double batch = static_cast<double>(e.workload.batch);
  const double prefill_s = batch * e.prefill_s_per_request;
  const double decode_s = static_cast<double>(e.workload.output_tokens) * e.tpot_s;
  in.input_time_share = prefill_s / (prefill_s + decode_s);
  return in;
}

PricePoint PriceAt(const PriceInputs& in, double utilization) {
  PricePoint p;
  p.utilization = utilization;
  const double usd_per_s = UsdPerS(in);
  // Tokens produced per second of wall time shrink with utilisation; the bill does not.
  p.usd_per_mtok_input = usd_per_s * in.input_time_share /
                         (in.replica_input_tokens_per_s * utilization) * kMillion;
  p.usd_per_mtok_output = usd_per_s * (1.0 - in.input_time_share) /
                          (in.replica_output_tokens_per_s * utilization) * kMillion;
  return p;
}

double DutyCycleMultiplier(double duty_cycle) { return 1.0 / duty_cycle; }

double BreakEvenUtilization(const PriceInputs& in, double api_usd_per_mtok_output) {
  return PriceAt(in, 1.0).usd_per_mtok_output / api_usd_per_mtok_output;
}

StatusOr<DemandSizing> SizeForDemand(const PriceInputs& in, double output_tokens_per_s) {
  constexpr double kMaxReplicas = 1e6;  // beyond any deployment; the demand is a typo
  const double replicas = std::ceil(output_tokens_per_s / in.replica_output_tokens_per_s);
  if (!(output_tokens_per_s > 0) || !(replicas <= kMaxReplicas)) {
    return Error(fmt::format("a demand of {:g} output tokens/s needs {:.3g} replicas; give a "
                             "demand between 1 and {:.3g} tokens/s",
                             output_tokens_per_s, replicas,
                             kMaxReplicas * in.replica_output_tokens_per_s));
  }
  DemandSizing d;
  d.demand_output_tokens_per_s = output_tokens_per_s;
  d.replicas = static_cast<int64_t>(replicas);
  d.gpus = d.replicas * in.gpus_per_replica;
  d.utilization = output_tokens_per_s /
                  (static_cast<double>(d.replicas) * in.replica_output_tokens_per_s);
  return d;
}

}  // namespace shardwise
