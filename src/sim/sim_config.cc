// The simulation's configuration, checked before a run (sim/simulator.h).
#include "shardwise/sim/simulator.h"

namespace shardwise {

Status CheckSimConfig(const SimConfig& config) {
  if (config.pools.empty() || config.pools.size() > 2) {
    return Error("the simulation needs one pool (aggregated) or two (prefill and decode)");
  }
  for (const SimPool& p : config.pools) {
    if (p.table == nullptr) return Error("a pool of the simulation has no step table");
    if (p.replicas < 1) return Error("the simulation needs at least one replica per pool");
    if (p.attention_dp < 1) return Error("a replica needs at least one attention rank");
    if (p.kv_capacity_tokens <= 0) return Error("a replica has no room for KV cache");
    if (p.batch.max_batch < 1 || p.batch.max_batched_tokens < 1) {
      return Error("`max_batch` and `max_batched_tokens` must be positive");
    }
  }
  if (!(config.prefix_hit_rate >= 0 && config.prefix_hit_rate <= 1)) {
    return FieldError("prefix_hit_rate", "the `prefix_hit_rate` must be in [0, 1]");
  }
  if (config.concurrency < 0) {
    return FieldError("concurrency", "`concurrency` must be a positive number of clients");
  }
  return Status();
}

}  // namespace shardwise
