#include "shardwise/perf/moe.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "shardwise/common/check.h"
#include "shardwise/layout/expert_placement.h"

namespace shardwise {

StatusOr<ModelSpec> SharedExpertsAsRouted(const ModelSpec& model) {
  const MoeSpec& moe = model.moe;
  if (moe.num_shared_experts == 0) {
    return Error(fmt::format("`shared_experts` routed: {} has no shared expert", model.name));
  }
  if (moe.shared_intermediate_size != moe.expert_intermediate_size || moe.shared_expert_gate) {
    return Error(fmt::format(
        "`shared_experts` routed places a shared expert in a routed expert's slot; {}'s "
        "shared experts are {} wide{} against {} for a routed one; use replicated",
        model.name, moe.shared_intermediate_size, moe.shared_expert_gate ? " and gated" : "",
        moe.expert_intermediate_size));
  }
  ModelSpec m = model;
  m.moe.num_experts += moe.num_shared_experts;
  m.moe.experts_per_token += moe.num_shared_experts;
  m.moe.always_selected = moe.num_shared_experts;
  m.moe.num_shared_experts = 0;
  m.moe.shared_intermediate_size = 0;
  m.moe.num_groups = 1;
  m.moe.groups_per_token = 1;
  return m;
}

std::vector<double> ZipfExpertLoads(int64_t experts, double skew) {
  std::vector<double> load(static_cast<size_t>(experts));
  for (int64_t i = 0; i < experts; ++i) load[i] = std::pow(static_cast<double>(i + 1), -skew);
  return load;
}

double PlacementImbalance(int64_t experts, int64_t ep, int64_t redundant,
                          const std::vector<double>& load) {
  if (ep <= 1) return 1.0;
  const StatusOr<ExpertPlacement> placement = PlaceExperts(experts, ep, redundant, load);
  SW_CHECK(placement.ok(), placement.status().message());
  const std::vector<double> ranks = RankLoads(*placement, load);
  double total = 0;
  for (double r : ranks) total += r;
  const double busiest = *std::max_element(ranks.begin(), ranks.end());
  return busiest / (total / static_cast<double>(ranks.size()));
}

ExpertLoad EstimateExpertLoad(const MoeSpec& moe, const ModelShard& shard, double group_tokens,
                              double ep, double imbalance, double capacity_factor) {
  const double topk = static_cast<double>(moe.experts_per_token);
  const double experts = static_cast<double>(moe.num_experts);
  ExpertLoad load;
  const double p = shard.expert_placement_imbalance;
  if (imbalance > 0) {
    load.imbalance = imbalance;
  } else if (ep <= 1 || group_tokens <= 0) {
    load.imbalance = 1.0;
  } else {
    // The busiest rank's expected pairs, p x mean, and their sampling tail; at most every
    // token once on that rank (or its placement share, whichever is more).
    const double mean = group_tokens * topk / ep;
    const double tail = p + std::sqrt(2.0 * p * std::log(ep) / mean);
    load.imbalance = std::min(tail, std::max({1.0, p, ep / topk}));
  }
  if (capacity_factor > 0 && load.imbalance > capacity_factor) {
    load.busiest_dropped_share = 1.0 - capacity_factor / load.imbalance;
    load.imbalance = capacity_factor;
  }
  // Experts a GPU must read: those that receive at least one of the group's tokens. Each
  // holds the group's token-expert pairs / experts rows on average; the busiest rank more.
  load.touched = shard.experts_per_gpu * (1.0 - std::pow(1.0 - topk / experts, group_tokens));
  // Rows per expert slot on the busiest rank: the rank's pairs over its slots.
  const double slots = shard.experts_per_gpu * ep;
  load.rows_per_expert = group_tokens * topk / (slots > 0 ? slots : experts) * load.imbalance;
  return load;
}

}  // namespace shardwise
