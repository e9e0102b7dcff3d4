#include "serving_check.h"

#include <algorithm>

#include "shardwise/perf/step.h"
#include "shardwise/sim/step_table.h"

namespace shardwise::cli {

StatusOr<ServeCheck> CheckServing(const ModelSpec& model, const ClusterSpec& cluster,
                                  const Layout& layout, const PerfOptions& perf,
                                  const LoadSpec& load, double percentile, double max_ttft_s,
                                  double max_tpot_s) {
  SW_ASSIGN_OR_RETURN(StepModel step, StepModel::Create(model, cluster, layout, perf));
  Workload one;
  one.prompt_tokens = load.isl;
  one.output_tokens = load.osl;
  const StepEstimate probe = step.Estimate(one);
  if (!probe.memory.Fits()) return Error(layout.ToString() + " does not fit in memory");
  // The same configuration 'simulate' builds for fixed lengths and Poisson arrivals.
  SimConfig config;
  config.replicas = layout.Replicas();
  config.gpus_per_replica = layout.InstanceGpus();
  config.batch.max_batch = load.max_batch;
  config.batch.max_batched_tokens = perf.max_batched_tokens;
  config.kv_capacity_tokens = probe.memory.kv_capacity_tokens;
  config.max_ttft_s = max_ttft_s;
  config.max_tpot_s = max_tpot_s;
  config.peak_flops_per_s =
      cluster.gpu.PeakFlopsPerS(cluster.gpu.ComputeDtypeFor(perf.weight_dtype));
  config.usd_per_gpu_hour = cluster.gpu.usd_per_gpu_hour;
  const int64_t table_batch =
      std::min<int64_t>(load.max_batch, std::max<int64_t>(1, probe.memory.max_sequences * 4));
  SW_ASSIGN_OR_RETURN(StepTable table, StepTable::Build(step, table_batch, load.isl + load.osl,
                                                        perf.max_batched_tokens));
  RequestSource source(
      {load.rate_per_s, 1.0}, {LengthDistribution::kFixed, static_cast<double>(load.isl), 0},
      {LengthDistribution::kFixed, static_cast<double>(load.osl), 0}, load.requests, load.seed);
  ServeCheck check;
  SW_ASSIGN_OR_RETURN(check.sim, Simulate(model, table, source, config));
  check.ttft_s = check.sim.ttft_s.Percentile(percentile);
  check.tpot_s = check.sim.tpot_s.Percentile(percentile);
  check.meets = check.ttft_s <= max_ttft_s && check.tpot_s <= max_tpot_s;
  return check;
}

}  // namespace shardwise::cli
