#include "shardwise/sim/histogram.h"

#include <algorithm>
#include <cmath>

namespace shardwise {
namespace {

// Buckets cover 1 ns .. 1e6 s at 1% relative width: ln(1e15) / ln(1.01) = 3,471 buckets.
constexpr double kMin = 1e-9;
constexpr double kGrowth = 1.01;
constexpr int kBuckets = 3500;

int Bucket(double v) {
  if (v <= kMin) return 0;
  const int b = static_cast<int>(std::log(v / kMin) / std::log(kGrowth));
  return std::clamp(b, 0, kBuckets - 1);
}

}  // namespace

LogHistogram::LogHistogram() : buckets_(kBuckets, 0.0) {}

void LogHistogram::Add(double value, double weight) {
  if (!(weight > 0)) return;  // nothing to count
  min_ = count_ > 0 ? std::min(min_, value) : value;
  max_ = count_ > 0 ? std::max(max_, value) : value;
  buckets_[Bucket(value)] += weight;
  count_ += weight;
  sum_ += value * weight;
}

double LogHistogram::Percentile(double p) const {
  if (count_ <= 0) return 0.0;
  if (p <= 0) return min_;
  if (p >= 100) return max_;
  const double target = count_ * p / 100.0;
  double seen = 0;
  for (int b = 0; b < kBuckets; ++b) {
    seen += buckets_[b];
    // The bucket's geometric middle stands for its values, within the range added.
    if (seen >= target && buckets_[b] > 0) {
      return std::clamp(kMin * std::pow(kGrowth, b + 0.5), min_, max_);
    }
  }
  return max_;
}

}  // namespace shardwise
