#include "shardwise/sim/samples.h"

#include <algorithm>
#include <cmath>

namespace shardwise {

void Samples::Add(double value, double weight) {
  if (!(weight > 0)) return;  // nothing to count
  if (!values_.empty() && value < values_.back().first) sorted_ = false;
  values_.emplace_back(value, weight);
  weight_ += weight;
  sum_ += value * weight;
}

void Samples::Merge(const Samples& other) {
  for (const auto& [value, weight] : other.values_) Add(value, weight);
}

double Samples::Percentile(double p) const {
  if (values_.empty()) return 0.0;
  if (!sorted_) {
    std::sort(values_.begin(), values_.end());
    sorted_ = true;
  }
  if (p <= 0) return values_.front().first;
  if (p >= 100) return values_.back().first;
  // Nearest rank: the first value whose cumulative weight reaches p% of the total. The small
  // tolerance keeps p = 50 of two equal weights on the first (floating sums of weights).
  const double target = weight_ * p / 100.0 * (1.0 - 1e-12);
  double seen = 0;
  for (const auto& [value, weight] : values_) {
    seen += weight;
    if (seen >= target) return value;
  }
  return values_.back().first;
}

}  // namespace shardwise
