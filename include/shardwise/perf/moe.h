// MoE expert load on one GPU: how many of its experts a step touches, how many rows the
// busiest expert rank computes, and the imbalance that sets the busiest rank's load. Pure
// functions.
#pragma once

#include "shardwise/model/model_spec.h"
#include "shardwise/perf/shard.h"

namespace shardwise {

// Load on the busiest of `ranks` expert ranks over the mean when `assignments` token-expert
// pairs land uniformly at random: mean + sqrt(2 mean ln ranks) (Gaussian tail of the maximum
// of `ranks` binomials), capped where every token lands on the busiest rank.
double StatisticalImbalance(double assignments, double ranks, double topk);

struct ExpertLoad {
  double imbalance = 1;        // busiest rank over the mean
  double touched = 0;          // experts on one GPU that receive at least one token
  double rows_per_expert = 0;  // rows each of them computes on the busiest rank
};

// `group_tokens` tokens enter an expert group of `ep` ranks; `imbalance` > 0 overrides the
// statistical estimate.
ExpertLoad EstimateExpertLoad(const MoeSpec& moe, const ModelShard& shard, double group_tokens,
                              double ep, double imbalance);

}  // namespace shardwise
