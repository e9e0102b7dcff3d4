#include "shardwise/runtime/reference_check.h"

#include <algorithm>
#include <cmath>

namespace shardwise {

float TopTwoMargin(const float* row, int64_t vocab) {
  if (vocab < 2) return 1.0f;
  float best = -INFINITY, second = -INFINITY, scale = 0;
  for (int64_t i = 0; i < vocab; ++i) {
    const float v = row[i];
    scale = std::max(scale, std::fabs(v));
    if (v > best) {
      second = best;
      best = v;
    } else if (v > second) {
      second = v;
    }
  }
  return scale > 0 ? (best - second) / scale : 0.0f;
}

ReferenceComparison CompareWithReference(const RunResult& reference, const RunResult& run,
                                         double tolerance) {
  ReferenceComparison out;
  const size_t vocab = static_cast<size_t>(reference.vocab);
  double scale = 0, diff = 0;
  for (float v : reference.logits) scale = std::max(scale, static_cast<double>(std::fabs(v)));
  for (size_t b = 0; b < reference.tokens.size(); ++b) {
    const std::vector<int64_t>& want = reference.tokens[b];
    const std::vector<int64_t>& got = run.tokens[b];
    const auto first = std::mismatch(want.begin(), want.end(), got.begin()).first;
    if (first != want.end()) {
      const size_t step = static_cast<size_t>(first - want.begin());
      const bool tie = reference.margins[b][step] <= 2 * tolerance;
      ++(tie ? out.near_ties : out.diverged);
      continue;
    }
    ++out.compared;
    for (size_t i = b * vocab; i < (b + 1) * vocab; ++i) {
      diff = std::max(diff, static_cast<double>(std::fabs(reference.logits[i] - run.logits[i])));
    }
  }
  out.max_relative_error = scale > 0 ? diff / scale : diff;
  return out;
}

}  // namespace shardwise
