// Attention core by kind: the query-key pairs a step computes (full causal attention, or a
// sliding window that caps each query's keys) and the cost of computing them and reading the
// cache on one GPU. MLA differs only in its per-key FLOPs (per phase) and cached bytes, which
// ModelShard carries. Pure functions.
#pragma once

#include <cstdint>

#include "shardwise/perf/breakdown.h"
#include "shardwise/perf/ops.h"
#include "shardwise/perf/shard.h"

namespace shardwise {

// Sum over t = 1..n of min(t, window): query-key pairs of one causal prompt (window 0 = full).
double CausalPairs(double n, int64_t window);
// Query-key pairs of a prefill chunk of `chunk` tokens that follows `prefix` tokens already in
// the cache: each of its queries attends to the whole prefix and the chunk's earlier tokens.
double ChunkPairs(double prefix, double chunk, int64_t window);
// Keys one decode query reads at KV length `context`.
double DecodeKeys(double context, int64_t window);

// FLOPs of one query against one key on one GPU in a phase (MLA: unabsorbed in prefill,
// absorbed in decode, as the engines run it).
double AttentionFlopsPerKey(const ModelShard& shard, bool prefill);

// The attention core of one layer on one GPU: `pairs` query-key pairs (split over `cp` ranks)
// reading `kv_read_tokens` cached tokens. Adds to `out` and returns its time.
double AttentionCore(const OpCoster& ops, const ModelShard& shard, double pairs,
                     double kv_read_tokens, double cp, bool prefill, PhaseBreakdown& out);

}  // namespace shardwise
