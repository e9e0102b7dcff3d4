// Shard geometry: which part of a model each rank of a layout holds. The layers of its pipeline
// stage, the query and KV heads and the FFN columns of its TP rank, the LM head's vocabulary
// rows, its place in the expert group and its expert slots. Computed here once, for the
// perf model (perf/shard.cc, and train/ through it), the runtime's loader and forward pass
// (runtime/forward/) and a run's memory estimate (runtime/run_budget.cc). Ranks are numbered
// as layout.h says: TP innermost, then CP, DP, PP. Pure functions and value types; thread-safe.
#pragma once

#include <cstdint>

#include "shardwise/layout/expert_placement.h"
#include "shardwise/layout/layout.h"
#include "shardwise/model/model_spec.h"

namespace shardwise {

// Indices [begin, end).
struct Range {
  int64_t begin = 0;
  int64_t end = 0;
  int64_t size() const { return end - begin; }
  bool operator==(const Range&) const = default;
};

// Where a world rank sits in a layout.
struct RankPlacement {
  int world_rank = 0;
  int tp_index = 0;
  int cp_index = 0;
  int dp_index = 0;
  int stage = 0;
  int replica = 0;     // dp_index / attention DP
  int adp_index = 0;   // attention-DP rank inside the replica
  int stage_rank = 0;  // rank inside the replica's stage (the expert group):
                       // (adp_index x cp + cp_index) x tp + tp_index
};
RankPlacement PlaceRank(const Layout& layout, int world_rank);

// Layers of pipeline stage `stage` of `pp`: contiguous, the first layers % pp stages take one
// more than the others.
Range StageLayerRange(int64_t layers, int64_t pp, int64_t stage);

// `index`-th of `parts` equal shares of `width` (FFN columns; `parts` divides `width`).
Range EvenShare(int64_t width, int64_t parts, int64_t index);

// The query heads of a TP rank (num_heads / tp consecutive heads) and the KV heads they read
// (GQA: query head h reads KV head h / (num_heads / num_kv_heads)). The KV range may hold more
// than kv / tp heads (tp not dividing the KV heads) or repeat on several ranks (tp above them).
struct HeadShard {
  Range heads;
  Range kv_heads;
  // The index inside kv_heads of the KV head that local query head `local` reads.
  int64_t LocalKvHead(int64_t local, int64_t group) const {
    return (heads.begin + local) / group - kv_heads.begin;
  }
};
HeadShard HeadRange(int64_t num_heads, int64_t num_kv_heads, int64_t tp, int64_t tp_index);

// The most KV heads any TP rank holds (HeadRange's kv_heads, over the ranks). Equals kv / tp when
// tp divides the KV heads, 1 when the KV heads divide tp (replication), and covers the general
// case (12 query heads, 2 KV heads, tp 3: the middle rank needs both).
int64_t KvHeadsPerRank(int64_t num_heads, int64_t num_kv_heads, int64_t tp);
// KV heads held over all tp ranks together (repeats counted each time).
int64_t KvHeadsOverRanks(int64_t num_heads, int64_t num_kv_heads, int64_t tp);

// The LM head's rows on a TP rank: ceil(vocab / tp) per rank, the last shares short (possibly
// empty); each rank pads its share with zero rows to `padded_rows` so every rank's logits have
// the same width.
struct VocabShard {
  Range rows;
  int64_t padded_rows = 0;
};
VocabShard VocabRange(int64_t vocab, int64_t tp, int64_t tp_index);

// A rank's place in its stage's expert group. ep = 1: every expert is on every stage rank, split
// over the TP group (etp = tp, etp_index = tp_index). ep > 1: EP rank stage_rank / etp, each
// expert's FFN split over etp = layout.ExpertTp() ranks.
struct ExpertRank {
  int64_t ep_index = 0;
  int64_t etp = 1;
  int64_t etp_index = 0;
};
ExpertRank ExpertRankOf(const Layout& layout, const RankPlacement& place);

// The expert slots (expert_placement.h) an EP rank holds.
Range ExpertSlots(const ExpertPlacement& placement, int64_t ep_index);

// Everything one rank holds of the model's dense parts.
struct RankShard {
  RankPlacement place;
  Range layers;
  bool first_stage = false, last_stage = false;
  HeadShard heads;
  Range ffn;         // dense FFN columns (intermediate units)
  Range shared_ffn;  // MoE: the shared experts' summed width, split over TP
  ExpertRank expert;
  Range expert_ffn;  // MoE: each routed expert's FFN columns on this expert-TP rank
  VocabShard vocab;  // last stage: the LM head's rows
};
RankShard ShardRank(const ModelSpec& model, const Layout& layout, int world_rank);

}  // namespace shardwise
