#include "shardwise/sim/degenerate.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace shardwise {

std::string DegenerateRunNote(const ServingRun& run) {
  const SimConfig& c = run.setup.config;
  if (c.concurrency <= 0 || c.pools.empty() || c.disaggregated()) return "";
  const SimPool& pool = c.pools.front();
  const double replicas = static_cast<double>(pool.replicas);
  const double clients = static_cast<double>(c.concurrency) / replicas;
  const double tpot_s = run.result.tpot_s.Mean();
  // Sequences decoding at once per replica: each emits one token per TPOT.
  const double decoding = run.result.OutputTokensPerS() * tpot_s / replicas;
  if (clients < kDegenerateClients || tpot_s <= 0 || decoding >= kDegenerateBatch ||
      run.result.kv_occupancy_mean >= kDegenerateKvOccupancy) {
    return "";
  }
  const BatchPolicy& b = pool.batch;
  std::string cause;
  if (static_cast<double>(b.max_batch) < clients) {
    cause = fmt::format("a batch limit of {} per attention rank (`max_batch`)",
                        b.max_batch / std::max<int64_t>(1, pool.attention_dp));
  } else if (!ChunksPrompts(b.schedule)) {
    cause = fmt::format(
        "whole prompts that barely fit the token budget ({} tokens, `max_batched_tokens`) beside "
        "the running decodes",
        b.max_batched_tokens);
  } else {
    cause = fmt::format(
        "the token budget ({} tokens per iteration, `max_batched_tokens`) or the batch limit "
        "({} sequences per attention rank, `max_batch`)",
        b.max_batched_tokens, b.max_batch / std::max<int64_t>(1, pool.attention_dp));
  }
  return fmt::format(
      "degenerate run: {:.0f} clients per replica were served about {:.1f} at a time with the KV "
      "cache {:.1f}% full; {} serialises them, so TTFT reflects the setting, not the hardware",
      clients, decoding, 100 * run.result.kv_occupancy_mean, cause);
}

std::string StalledPipelineNote(const ServingRun& run) {
  const SimConfig& c = run.setup.config;
  if (c.concurrency > 0 || c.pools.empty() || c.disaggregated()) return "";
  const SimPool& pool = c.pools.front();
  const bool waiting = run.overloaded || !std::isfinite(run.offered_requests_per_s);
  if (pool.pipeline_stages < 2 || !waiting || run.result.utilization >= kStalledPipelineBusy) {
    return "";
  }
  return fmt::format(
      "stalled pipeline: its {} stages were busy {:.1f}% of the time with requests waiting; each "
      "of its {} virtual engines waits at every stage for the iteration ahead of it, so an "
      "iteration longer than the others (a long prompt, {}) holds theirs up; fewer pipeline "
      "stages even them out. The stall may run deeper here than in the engine: MLPerf's "
      "published Llama3.1-405B pp2 runs served more than simulated (docs/validation/mlperf.md)",
      pool.pipeline_stages, 100 * run.result.utilization, pool.pipeline_stages,
      ChunksPrompts(pool.batch.schedule) ? "its chunks capped by `max_batched_tokens`"
                                         : "prefilled whole as this engine does");
}

}  // namespace shardwise
