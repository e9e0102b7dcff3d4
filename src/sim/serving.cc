#include "shardwise/sim/serving.h"

#include <algorithm>

namespace shardwise {

SimConfig ServingConfig(const ClusterSpec& cluster, const Layout& layout, const PerfOptions& perf,
                        double kv_capacity_tokens, int64_t max_batch, Admission admission) {
  SimConfig config;
  config.replicas = layout.Replicas();
  config.gpus_per_replica = layout.InstanceGpus();
  config.batch.max_batch = max_batch * layout.AttentionDp();
  config.batch.block_tokens = static_cast<int64_t>(perf.engine.kv_block_tokens);
  // Each attention-DP rank schedules its own iteration of max_batched_tokens.
  config.attention_dp = layout.AttentionDp();
  config.batch.max_batched_tokens = perf.max_batched_tokens * layout.AttentionDp();
  config.batch.admission = admission;
  config.kv_capacity_tokens = kv_capacity_tokens;
  config.prefix_hit_rate = perf.prefix_hit_rate;
  config.peak_flops_per_s =
      cluster.gpu.PeakFlopsPerS(cluster.gpu.ComputeDtypeFor(perf.weight_dtype));
  config.usd_per_gpu_hour = cluster.gpu.usd_per_gpu_hour;
  return config;
}

StatusOr<StepTable> ServingTable(const StepModel& step, const PerfOptions& perf,
                                 int64_t max_sequences, int64_t max_batch, int64_t longest_tokens) {
  const int64_t table_batch = std::min<int64_t>(max_batch * step.layout().AttentionDp(),
                                                std::max<int64_t>(1, max_sequences * 4));
  return StepTable::Build(step, table_batch, longest_tokens, perf.max_batched_tokens);
}

}  // namespace shardwise
