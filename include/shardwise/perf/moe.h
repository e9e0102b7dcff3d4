// MoE expert load on one GPU: how many of its experts a step touches, how many rows the
// busiest expert rank computes, and the imbalance that sets the busiest rank's load. Pure
// functions.
#pragma once

#include <cstdint>
#include <vector>

#include "shardwise/common/status.h"
#include "shardwise/model/model_spec.h"
#include "shardwise/perf/shard.h"

namespace shardwise {

// The model with its shared experts placed as routed ones, as DeepSeek-V3 decodes ("DeepSeek-V3
// Technical Report" 3.4: the shared expert is a heavy-load routed expert every token selects):
// experts + shared experts, top-k + shared, the shared ones first and always selected, no group
// limit. Errors when the model has no shared expert or its width differs from a routed one's.
StatusOr<ModelSpec> SharedExpertsAsRouted(const ModelSpec& model);

// Relative load of each of `experts` routed experts under a Zipf law of exponent `skew`:
// (i + 1)^-skew for expert i, hottest first (all 1 at skew 0).
std::vector<double> ZipfExpertLoads(int64_t experts, double skew);

// The busiest EP rank's share of the routed load over the mean share, after the EPLB-style
// placement of `experts` + `redundant` copies of `load` over `ep` ranks (expert_placement.h):
// 1 when the load spreads evenly. The counts must be valid (ValidateLayout).
double PlacementImbalance(int64_t experts, int64_t ep, int64_t redundant,
                          const std::vector<double>& load);

struct ExpertLoad {
  double imbalance = 1;        // busiest rank over the mean: placement, then sampling
  double touched = 0;          // experts on one GPU that receive at least one token
  double rows_per_expert = 0;  // rows each of them computes on the busiest rank
  // With a capacity factor: the share of the busiest rank's pairs it drops (0 without).
  double busiest_dropped_share = 0;
};

// `group_tokens` tokens enter an expert group of `ep` ranks; `imbalance` > 0 overrides the
// estimate. The estimate starts from the busiest rank's mean load under the placement
// (shard.expert_placement_imbalance, p) and adds the Gaussian tail of the maximum of `ep`
// binomials around it: p + sqrt(2 p ln(ep) / mean), mean the pairs per rank (at p = 1, uniform
// random routing), capped where every token lands on the busiest rank (ep / top-k). A capacity
// factor c > 0 caps every expert, and so the busiest rank, at c times the mean (GShard's expert
// capacity); the pairs above it are dropped.
ExpertLoad EstimateExpertLoad(const MoeSpec& moe, const ModelShard& shard, double group_tokens,
                              double ep, double imbalance, double capacity_factor = 0);

}  // namespace shardwise
