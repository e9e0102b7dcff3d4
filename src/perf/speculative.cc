#include "shardwise/perf/speculative.h"

#include <fmt/format.h>

namespace shardwise {

double ExpectedTokensPerStep(const std::vector<double>& acceptance) {
  double tokens = 1;
  double all_accepted = 1;
  for (double a : acceptance) {
    all_accepted *= a;
    tokens += all_accepted;
  }
  return tokens;
}

std::string_view SpeculativeMethodName(SpeculativeMethod method) {
  switch (method) {
    case SpeculativeMethod::kNone:
      return "none";
    case SpeculativeMethod::kMtp:
      return "mtp";
    case SpeculativeMethod::kEagle:
      return "eagle";
    case SpeculativeMethod::kDraftModel:
      return "draft";
  }
  return "?";
}

StatusOr<SpeculativeMethod> ParseSpeculativeMethod(std::string_view text) {
  if (text == "none") return SpeculativeMethod::kNone;
  if (text == "mtp") return SpeculativeMethod::kMtp;
  if (text == "eagle") return SpeculativeMethod::kEagle;
  if (text == "draft") return SpeculativeMethod::kDraftModel;
  return Error(fmt::format("`speculative` '{}': use mtp, eagle or draft:MODEL", text));
}

StageLayers DraftHeadLayers(SpeculativeMethod method, const ModelSpec& target) {
  StageLayers st;
  st.mixers = {MixerKind::kAttention};
  st.windows = {0};
  (method == SpeculativeMethod::kMtp && target.is_moe() ? st.moe : st.dense) = 1;
  st.last = true;
  return st;
}

double DraftHeadParams(SpeculativeMethod method, const ModelSpec& target, const ModelShard& s) {
  const double ffn = method == SpeculativeMethod::kMtp && target.is_moe()
                         ? s.experts_per_gpu * s.expert_params + s.shared_params + s.router_params
                         : s.dense_ffn_params;
  return s.attention_params + ffn + s.norm_params;
}

}  // namespace shardwise
