#include "shardwise/sim/degenerate.h"

#include <fmt/format.h>

#include <algorithm>

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

}  // namespace shardwise
