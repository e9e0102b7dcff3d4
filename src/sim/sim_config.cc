// The simulation's configuration and the requests it can hold, checked before a run.
// (sim/simulator.h).
#include <fmt/format.h>

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
  for (const double delay_s : {config.request_path_s, config.tokenize_s_per_token}) {
    if (!(delay_s >= 0 && delay_s <= 1)) {
      return Error("the front end's request path and tokenization times must be in [0, 1] s");
    }
  }
  return Status();
}

Status CheckRequestFits(const std::vector<SimPool>& pools, const TraceRequest& t) {
  for (const SimPool& p : pools) {
    const int64_t held =
        p.role == PoolRole::kPrefill ? t.input_tokens : t.input_tokens + t.output_tokens;
    const double need =
        static_cast<double>(held + p.batch.block_tokens) + p.state_tokens_per_sequence;
    if (need > p.kv_capacity_tokens) {
      return FailedPrecondition(fmt::format(
          "a request of {} + {} tokens needs more KV than a{} replica holds ({:.0f} tokens); "
          "use more GPUs per replica or shorter requests",
          t.input_tokens, t.output_tokens,
          p.role == PoolRole::kPrefill ? " prefill"
                                       : (p.role == PoolRole::kDecode ? " decode" : ""),
          p.kv_capacity_tokens));
    }
  }
  return Status();
}

}  // namespace shardwise
