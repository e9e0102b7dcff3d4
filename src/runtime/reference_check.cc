#include "shardwise/runtime/reference_check.h"

#include <algorithm>
#include <cmath>

#include "shardwise/runtime/backend/kernels.h"

namespace shardwise {

float TopTwoMargin(const float* row, int64_t vocab) {
  if (vocab < 2) return 1.0f;
  LogitStat s;
  for (int64_t i = 0; i < vocab; ++i) {
    s.max_abs = std::max(s.max_abs, std::fabs(row[i]));
    s.Fold(row[i], i);
  }
  return s.max_abs > 0 ? (s.best - s.second) / s.max_abs : 0.0f;
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
    double seq_diff = 0;
    for (size_t i = b * vocab; i < (b + 1) * vocab; ++i) {
      seq_diff =
          std::max(seq_diff, static_cast<double>(std::fabs(reference.logits[i] - run.logits[i])));
    }
    // A sequence off by more than the tolerance is excused only where the reference routed one
    // of its tokens between near-tied experts.
    const bool near_tied_route =
        !reference.router_margins.empty() && reference.router_margins[b] <= 2 * tolerance;
    if (seq_diff > tolerance * scale && near_tied_route) {
      ++out.router_ties;
      continue;
    }
    ++out.compared;
    diff = std::max(diff, seq_diff);
  }
  out.max_relative_error = scale > 0 ? diff / scale : diff;
  return out;
}

}  // namespace shardwise
