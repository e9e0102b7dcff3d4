#include "shardwise/perf/sparse_attention.h"

#include "shardwise/perf/attention.h"

namespace shardwise {

double SparseAttentionCore(const OpCoster& ops, const ModelShard& s, double core_pairs,
                           double indexer_pairs, double kv_read_core, double kv_read_indexer,
                           double cp, bool prefill, PhaseBreakdown& out) {
  const double latent_bytes = s.kv_bytes_per_token - s.indexer_key_bytes_per_token;
  const double indexer = ops.Roofline(indexer_pairs * s.indexer_flops_per_key / cp,
                                      kv_read_indexer * s.indexer_key_bytes_per_token,
                                      ops.attention_flops_per_s(), out);
  const double core = ops.Roofline(core_pairs * AttentionFlopsPerKey(s, prefill) / cp,
                                   kv_read_core * latent_bytes, ops.attention_flops_per_s(), out);
  return indexer + core;
}

}  // namespace shardwise
