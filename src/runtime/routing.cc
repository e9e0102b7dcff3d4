#include "routing.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>

#include "shardwise/runtime/kernels.h"

namespace shardwise {
namespace {

// The k largest of `score` among `candidates`, ties to the lower index.
std::vector<int64_t> TopK(const std::vector<float>& score, std::vector<int64_t> candidates,
                          int64_t k) {
  std::partial_sort(
      candidates.begin(), candidates.begin() + k, candidates.end(),
      [&](int64_t a, int64_t b) { return score[a] != score[b] ? score[a] > score[b] : a < b; });
  candidates.resize(static_cast<size_t>(k));
  return candidates;
}

// (the k-th largest of `score` over `candidates` - the (k+1)-th) / max |score| over them; 1 when
// every candidate is chosen.
float BoundaryGap(const std::vector<float>& score, const std::vector<int64_t>& candidates,
                  int64_t k) {
  if (static_cast<int64_t>(candidates.size()) <= k) return 1.0f;
  std::vector<float> sorted;
  float scale = 0;
  for (int64_t c : candidates) {
    sorted.push_back(score[c]);
    scale = std::max(scale, std::fabs(score[c]));
  }
  std::nth_element(sorted.begin(), sorted.begin() + k, sorted.end(), std::greater<float>());
  const float next = sorted[k];
  const float kth = *std::min_element(sorted.begin(), sorted.begin() + k);
  return scale > 0 ? (kth - next) / scale : 0.0f;
}

}  // namespace

Routes RouteTokens(const MoeSpec& moe, bool norm_topk_prob, const float* logits,
                   const float* score_bias, int64_t rows, std::vector<float>* margins) {
  if (margins) margins->assign(static_cast<size_t>(rows), 1.0f);
  const int64_t experts = moe.num_experts, k = moe.experts_per_token;
  const int64_t groups = moe.num_groups, per_group = experts / groups;
  Routes routes(static_cast<size_t>(rows));
  std::vector<float> prob(static_cast<size_t>(experts)), choice(static_cast<size_t>(experts));
  for (int64_t t = 0; t < rows; ++t) {
    std::copy_n(logits + t * experts, experts, prob.begin());
    if (moe.sigmoid_scores) {
      for (float& p : prob) p = 1.0f / (1.0f + std::exp(-p));
    } else {
      kernels::Softmax(prob.data(), experts);
    }
    for (int64_t e = 0; e < experts; ++e) choice[e] = prob[e] + (score_bias ? score_bias[e] : 0.0f);
    std::vector<int64_t> candidates;
    if (groups > 1) {
      // Group score: the sum of its two best biased scores (noaux_tc) or its best (greedy).
      std::vector<float> group_score(static_cast<size_t>(groups));
      for (int64_t g = 0; g < groups; ++g) {
        std::vector<int64_t> members(static_cast<size_t>(per_group));
        std::iota(members.begin(), members.end(), g * per_group);
        const int64_t best = score_bias ? std::min<int64_t>(2, per_group) : 1;
        float sum = 0;
        for (int64_t e : TopK(choice, members, best)) sum += choice[e];
        group_score[g] = sum;
      }
      std::vector<int64_t> all_groups(static_cast<size_t>(groups));
      std::iota(all_groups.begin(), all_groups.end(), 0);
      for (int64_t g : TopK(group_score, all_groups, moe.groups_per_token)) {
        for (int64_t e = g * per_group; e < (g + 1) * per_group; ++e) candidates.push_back(e);
      }
      if (margins) (*margins)[t] = BoundaryGap(group_score, all_groups, moe.groups_per_token);
    } else {
      candidates.resize(static_cast<size_t>(experts));
      std::iota(candidates.begin(), candidates.end(), 0);
    }
    const std::vector<int64_t> chosen = TopK(choice, candidates, k);
    if (margins) {
      // An unbiased softmax is monotonic: its choice is the logits', so the gap is theirs.
      const std::vector<float> logit_row(logits + t * experts, logits + (t + 1) * experts);
      const bool by_score = moe.sigmoid_scores || score_bias != nullptr;
      const float gap = BoundaryGap(by_score ? choice : logit_row, candidates, k);
      (*margins)[t] = std::min((*margins)[t], gap);
    }
    float sum = 0;
    for (int64_t e : chosen) sum += prob[e];
    for (int64_t e : chosen) {
      const float w = norm_topk_prob ? prob[e] / sum : prob[e];
      routes[t].emplace_back(e, w * static_cast<float>(moe.routed_scaling_factor));
    }
  }
  return routes;
}

int64_t ExpertCapacity(double factor, int64_t tokens, int64_t k, int64_t experts) {
  return static_cast<int64_t>(
      std::ceil(factor * static_cast<double>(tokens * k) / static_cast<double>(experts)));
}

std::vector<std::vector<bool>> WithinCapacity(const std::vector<std::vector<int64_t>>& chosen,
                                              int64_t experts, int64_t capacity) {
  std::vector<int64_t> held(static_cast<size_t>(experts), 0);
  std::vector<std::vector<bool>> keep;
  for (const std::vector<int64_t>& token : chosen) {
    keep.emplace_back();
    for (int64_t e : token) keep.back().push_back(held[e]++ < capacity);
  }
  return keep;
}

}  // namespace shardwise
