// The core of a recurrent token mixer (Gated DeltaNet linear attention, Mamba-2) on one GPU:
// a fixed-size state per sequence instead of a KV cache, so its FLOPs per token and its bytes
// per sequence do not depend on the context length. Decode reads and writes each sequence's
// state once per step; chunked prefill does so once per chunk and adds causal attention inside
// each chunk. Pure functions.
#pragma once

#include "shardwise/perf/breakdown.h"
#include "shardwise/perf/ops.h"
#include "shardwise/perf/shard.h"

namespace shardwise {

// One recurrent layer over `tokens` tokens of `sequences` sequences (decode: one token each;
// prefill: a chunk of a prompt). Adds to `out` and returns its time.
double RecurrentCore(const OpCoster& ops, const ModelShard& shard, double tokens, double sequences,
                     bool prefill, PhaseBreakdown& out);

}  // namespace shardwise
