#include "shardwise/sim/serving.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "shardwise/common/format.h"

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
  config.batch.schedule =
      perf.engine.mixed_prefill_decode ? PrefillSchedule::kMixed : PrefillSchedule::kPrefillFirst;
  config.batch.chunked_prefill = perf.engine.chunked_prefill;
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

StatusOr<std::unique_ptr<DisaggregatedServing>> BuildDisaggregatedServing(
    const ModelSpec& model, const Deployment& d, const StepModel& prefill_step,
    const StepModel& decode_step, const ClusterSpec& prefill_cluster,
    const ClusterSpec& decode_cluster, bool same_cluster, const PerfOptions& perf,
    const Workload& workload, int64_t longest_tokens, int64_t max_batch, Admission admission,
    const OfferedLoad& offered) {
  SW_CHECK(d.decode.has_value(), "BuildDisaggregatedServing: an aggregated deployment");
  auto s = std::make_unique<DisaggregatedServing>();
  Workload one = workload;
  one.batch = 1;
  s->prefill_probe = prefill_step.Estimate(one);
  s->decode_probe = decode_step.Estimate(one);
  if (!s->prefill_probe.memory.Fits()) {
    return Error(fmt::format("the prefill layout {} does not fit on {}: {} of {} usable per GPU",
                             d.prefill.layout.ToString(), prefill_cluster.gpu.name,
                             FormatBytes(s->prefill_probe.memory.UsedBytes()),
                             FormatBytes(s->prefill_probe.memory.usable_bytes)));
  }
  if (!s->decode_probe.memory.Fits()) {
    return Error(fmt::format("the decode layout {} does not fit on {}: {} of {} usable per GPU",
                             d.decode->layout.ToString(), decode_cluster.gpu.name,
                             FormatBytes(s->decode_probe.memory.UsedBytes()),
                             FormatBytes(s->decode_probe.memory.usable_bytes)));
  }
  const MemoryPerGpu& pm = s->prefill_probe.memory;
  const MemoryPerGpu& dm = s->decode_probe.memory;
  SW_ASSIGN_OR_RETURN(s->prefill_table, ServingTable(prefill_step, perf, pm.max_sequences,
                                                     max_batch, longest_tokens));
  SW_ASSIGN_OR_RETURN(s->decode_table,
                      ServingTable(decode_step, perf, dm.max_sequences, max_batch, longest_tokens));

  // The KV moves from each prefill GPU's shard to each decode GPU's shard.
  s->link = PoolLink(prefill_cluster, decode_cluster, same_cluster, d.Gpus());
  const double prompt = static_cast<double>(workload.prompt_tokens);
  const double layers = static_cast<double>(std::max<int64_t>(1, model.num_layers()));
  s->transfer = EstimateKvTransfer(s->link, pm.kv_bytes_per_token, dm.kv_bytes_per_token,
                                   d.transfer, s->prefill_probe.ttft_s / prompt, layers);

  // Can the decode pool hold what the prefill pool sends it? Each request decodes for about
  // OSL steps at the pool's full-batch TPOT; Little's law gives the sequences in flight.
  const double prefill_rate_per_s = static_cast<double>(d.prefill.workers) *
                                    static_cast<double>(d.prefill.layout.Replicas()) /
                                    s->prefill_probe.prefill_s_per_request;
  Workload full = workload;
  full.batch = std::max<int64_t>(1, dm.max_sequences);
  const double residence_s =
      static_cast<double>(workload.output_tokens) * decode_step.Estimate(full).tpot_s;
  const double decode_sequences =
      static_cast<double>(d.decode->workers) * static_cast<double>(dm.max_sequences);
  const double arriving_per_s = std::min(offered.rate_per_s, prefill_rate_per_s);
  const double needed = std::min(offered.max_in_flight, arriving_per_s * residence_s);
  if (needed > decode_sequences) {
    const double per_worker = static_cast<double>(std::max<int64_t>(1, dm.max_sequences));
    return Error(fmt::format(
        "the decode pool ({} x {}) holds {:.0f} sequences of {} + {} tokens, but the prefill "
        "pool sends it {:.2f} requests/s that each decode for {}: {:.0f} at once; use "
        "--decode-workers {:.0f} or more, or a lower load",
        d.decode->workers, d.decode->layout.ToString(), decode_sequences, workload.prompt_tokens,
        workload.output_tokens, arriving_per_s, FormatSeconds(residence_s), needed,
        std::ceil(needed / per_worker)));
  }

  SimConfig& c = s->config;
  c = ServingConfig(prefill_cluster, d.prefill.layout, perf, pm.kv_capacity_tokens, max_batch,
                    admission);
  c.replicas = d.prefill.workers * d.prefill.layout.Replicas();
  c.state_tokens_per_sequence = pm.state_tokens_per_sequence;
  const SimConfig decode = ServingConfig(decode_cluster, d.decode->layout, perf,
                                         dm.kv_capacity_tokens, max_batch, admission);
  DecodePoolConfig pool;
  pool.table = &s->decode_table;
  pool.replicas = d.decode->workers * d.decode->layout.Replicas();
  pool.gpus_per_replica = decode.gpus_per_replica;
  pool.attention_dp = decode.attention_dp;
  pool.batch = decode.batch;
  pool.kv_capacity_tokens = decode.kv_capacity_tokens;
  pool.state_tokens_per_sequence = dm.state_tokens_per_sequence;
  pool.peak_flops_per_s = decode.peak_flops_per_s;
  pool.usd_per_gpu_hour = decode.usd_per_gpu_hour;
  pool.transfer_latency_s = s->transfer.latency_s;
  pool.transfer_s_per_token = s->transfer.exposed_s_per_token;
  c.decode_pool = pool;
  return s;
}

}  // namespace shardwise
