// Speculative decoding in the step model: a draft (DeepSeek-V3's multi-token-prediction module,
// an EAGLE head, or a smaller draft model) proposes k tokens per sequence, and the target checks
// them in one verification pass of k + 1 tokens per sequence. With acceptance a_i for draft
// position i (given positions 1..i-1 were accepted), one step yields on average
// 1 + sum_i prod_{j<=i} a_j tokens: the target's own token plus each accepted draft token
// ("Fast Inference from Transformers via Speculative Decoding", Leviathan et al., 2023).
// Pure functions.
#pragma once

#include <string_view>
#include <vector>

#include "shardwise/common/status.h"
#include "shardwise/model/model_spec.h"
#include "shardwise/perf/options.h"
#include "shardwise/perf/shard.h"

namespace shardwise {

// 1 + a_1 + a_1 a_2 + ... + a_1 ... a_k.
double ExpectedTokensPerStep(const std::vector<double>& acceptance);

std::string_view SpeculativeMethodName(SpeculativeMethod method);
StatusOr<SpeculativeMethod> ParseSpeculativeMethod(std::string_view text);

// The layers of an MTP module or an EAGLE head, run once per draft token on the last pipeline
// stage: one attention layer with the target's MoE FFN (MTP, as DeepSeek-V3's module is one of
// its own transformer blocks) or a dense FFN (EAGLE's one decoder layer), then the LM head.
StageLayers DraftHeadLayers(SpeculativeMethod method, const ModelSpec& target);

// Parameters of that draft head on one GPU (the LM head and embedding are the target's).
double DraftHeadParams(SpeculativeMethod method, const ModelSpec& target, const ModelShard& shard);

}  // namespace shardwise
