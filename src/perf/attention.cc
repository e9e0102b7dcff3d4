#include "shardwise/perf/attention.h"

#include <algorithm>

namespace shardwise {

double CausalPairs(double n, int64_t window) {
  if (window <= 0 || n <= static_cast<double>(window)) return n * (n + 1) / 2;
  const double w = static_cast<double>(window);
  return w * (w + 1) / 2 + (n - w) * w;
}

double ChunkPairs(double prefix, double chunk, int64_t window) {
  return CausalPairs(prefix + chunk, window) - CausalPairs(prefix, window);
}

double DecodeKeys(double context, int64_t window) {
  return window > 0 ? std::min(context, static_cast<double>(window)) : context;
}

double AttentionFlopsPerKey(const ModelShard& shard, bool prefill) {
  return prefill ? shard.attention_flops_per_key : shard.decode_attention_flops_per_key;
}

double AttentionCore(const OpCoster& ops, const ModelShard& shard, double pairs,
                     double kv_read_tokens, double cp, bool prefill, PhaseBreakdown& out) {
  return ops.Roofline(pairs * AttentionFlopsPerKey(shard, prefill) / cp,
                      kv_read_tokens * shard.kv_bytes_per_token, ops.attention_flops_per_s(), out);
}

}  // namespace shardwise
