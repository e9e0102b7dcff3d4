// The MoE router: which experts each token goes to and with what weight, from the router
// logits. Two scorings, chosen by the model:
//   softmax (Mixtral, Qwen-MoE): softmax over all experts, top-k, optionally renormalised.
//   sigmoid (DeepSeek-V3 "auxiliary-loss-free" routing, DeepSeek-V3 Technical Report §2.1.2):
//     s = sigmoid(logit); experts are chosen by s + correction bias, first the topk_group
//     groups with the largest sum of their two best biased scores, then the top-k inside
//     them; the weights are the unbiased s, renormalised, times routed_scaling_factor.
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "shardwise/model/model_spec.h"

namespace shardwise {

using Routes = std::vector<std::vector<std::pair<int64_t, float>>>;  // [token] -> (expert, weight)

// logits [rows x experts]; score_bias [experts] or null. `margins`, when set, receives each
// row's routing margin: how close the choice came to another, as the gap at the top-k boundary
// of the selection score (the logit for softmax routers, which is monotonic in the softmax; the
// biased score for sigmoid routers) and, with groups, at the top-groups boundary of the group
// scores, each over the largest |value| it is compared with; the smaller of the two. A
// computation whose router logits are off by less than half the margin of that scale chooses
// the same experts (reference_check.h).
Routes RouteTokens(const MoeSpec& moe, bool norm_topk_prob, const float* logits,
                   const float* score_bias, int64_t rows, std::vector<float>* margins = nullptr);

// Expert capacity ("GShard", Lepikhin et al. 2020; "Switch Transformers", Fedus et al. 2021):
// ceil(factor x tokens x k / experts) (token, expert) pairs per expert among `tokens` tokens.
int64_t ExpertCapacity(double factor, int64_t tokens, int64_t k, int64_t experts);
// For tokens in priority order (`chosen[t]`: the experts token t was routed to), whether each
// pair fits: an expert takes pairs until it holds `capacity`; later ones are dropped (the
// token keeps its residual stream and its other experts).
std::vector<std::vector<bool>> WithinCapacity(const std::vector<std::vector<int64_t>>& chosen,
                                              int64_t experts, int64_t capacity);

}  // namespace shardwise
