// DeepSeek Sparse Attention (DeepSeek-V3.2, GLM-5) on one GPU: a lightning indexer scores every
// cached key of each query (small heads, its own key cache), and the attention core then
// attends to the top-k keys only. Beyond k tokens the core's FLOPs and KV reads stop growing;
// the indexer's stay linear in the context but cost index_heads x (index_head_dim + 1) x 2
// FLOPs and index_head_dim elements per key. Pure functions.
#pragma once

#include "shardwise/perf/breakdown.h"
#include "shardwise/perf/ops.h"
#include "shardwise/perf/shard.h"

namespace shardwise {

// One layer: `core_pairs` query-key pairs of the attention core (each query capped at top-k),
// `indexer_pairs` pairs the indexer scores (every cached key), split over `cp` ranks;
// `kv_read_core` and `kv_read_indexer` cached tokens read by each; the core's FLOPs per key are
// the phase's (attention.h). Adds to `out`, returns time.
double SparseAttentionCore(const OpCoster& ops, const ModelShard& shard, double core_pairs,
                           double indexer_pairs, double kv_read_core, double kv_read_indexer,
                           double cp, bool prefill, PhaseBreakdown& out);

}  // namespace shardwise
