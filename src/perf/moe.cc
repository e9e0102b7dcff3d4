#include "shardwise/perf/moe.h"

#include <algorithm>
#include <cmath>

namespace shardwise {

double StatisticalImbalance(double assignments, double ranks, double topk) {
  if (ranks <= 1 || assignments <= 0) return 1.0;
  const double mean = assignments / ranks;
  const double factor = 1.0 + std::sqrt(2.0 * std::log(ranks) / mean);
  return std::min(factor, std::max(1.0, ranks / topk));
}

ExpertLoad EstimateExpertLoad(const MoeSpec& moe, const ModelShard& shard, double group_tokens,
                              double ep, double imbalance) {
  const double topk = static_cast<double>(moe.experts_per_token);
  const double experts = static_cast<double>(moe.num_experts);
  ExpertLoad load;
  load.imbalance = imbalance > 0 ? imbalance : StatisticalImbalance(group_tokens * topk, ep, topk);
  // Experts a GPU must read: those that receive at least one of the group's tokens. Each
  // holds the group's token-expert pairs / experts rows on average; the busiest rank more.
  load.touched = shard.experts_per_gpu * (1.0 - std::pow(1.0 - topk / experts, group_tokens));
  load.rows_per_expert = group_tokens * topk / experts * load.imbalance;
  return load;
}

}  // namespace shardwise
