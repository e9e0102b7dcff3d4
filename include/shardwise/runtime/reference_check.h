// A run against the unsharded reference run: logits within a tolerance and the same greedy
// tokens, except where the reference's choice was a near tie. Rounding (bf16 on a GPU, or
// another fp32 summation order) moves each logit by up to tolerance x the row's largest
// |logit|; when the reference's best two logits are closer than twice that, the run may
// legitimately pick the other one, and its sequence then continues from a different token. Such
// sequences are counted, not failed, and their later logits are not compared. MoE routing is a
// choice too: a sequence one of whose tokens the reference routed with a margin (routing.h) of
// at most twice the tolerance may legitimately reach other experts, which changes its hidden
// state without changing its greedy token; when such a sequence's logits are off by more than
// the tolerance, it is counted and not compared either.
#pragma once

#include <cstdint>

#include "shardwise/runtime/runner.h"

namespace shardwise {

// (best - second best) / max |logit| of one row of `vocab` logits; 1 for a single-entry row.
float TopTwoMargin(const float* row, int64_t vocab);

struct ReferenceComparison {
  double max_relative_error = 0;  // over the compared sequences' final logits, / ref's max |logit|
  int64_t compared = 0;           // sequences whose tokens all agree
  int64_t near_ties = 0;          // first differing token where the reference margin <= 2 x tol
  int64_t router_ties = 0;        // same tokens, logits off, a reference routing margin <= 2 x tol
  int64_t diverged = 0;           // first differing token where the margin was wider: a failure
  bool Matches(double tolerance) const { return diverged == 0 && max_relative_error <= tolerance; }
};

// Both runs must have the same batch, generate_tokens and vocab (the runner's output).
ReferenceComparison CompareWithReference(const RunResult& reference, const RunResult& run,
                                         double tolerance);

}  // namespace shardwise
