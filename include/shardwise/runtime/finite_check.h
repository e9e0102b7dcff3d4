// Numerical sanity for the runtime: weights and activations must be finite. A NaN or infinity
// is reported as an error naming the tensor (and so its layer) instead of flowing through the
// run and into a "matching" reference check. Free functions and a WeightSource decorator.
#pragma once

#include <memory>
#include <span>
#include <string_view>

#include "shardwise/common/status.h"
#include "shardwise/runtime/weights.h"

namespace shardwise {

// An error naming `what` and the first non-finite element's index, or OK.
Status CheckFinite(std::span<const float> values, std::string_view what);

// Wraps `source` so every Read fails on a non-finite element, naming the tensor.
std::unique_ptr<WeightSource> FiniteWeights(std::unique_ptr<WeightSource> source);

}  // namespace shardwise
