// Samples: the exact distribution of a simulated metric (a request's TTFT, TPOT, end-to-end
// time, or an iteration's inter-token gap weighted by the sequences it served). Percentiles are
// exact order statistics (the nearest rank, weighted): p50 <= p90 <= p99 <= max always, and a
// percentile is always one of the values added. Memory grows with the values kept (16 bytes
// each: a million requests' four metrics take ~64 MB). Value type; not thread-safe (the first
// percentile after an add sorts in place).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace shardwise {

class Samples {
 public:
  void Add(double value, double weight = 1.0);
  // The smallest value v with at least p% of the weight at or below it; p in [0, 100]
  // (0: the smallest value, 100: the largest); 0 when empty.
  double Percentile(double p) const;
  double Mean() const { return weight_ > 0 ? sum_ / weight_ : 0.0; }
  double Count() const { return weight_; }
  double Max() const { return Percentile(100); }
  // Appends `other`'s values.
  void Merge(const Samples& other);

 private:
  mutable std::vector<std::pair<double, double>> values_;  // (value, weight)
  mutable bool sorted_ = true;
  double weight_ = 0;
  double sum_ = 0;
};

}  // namespace shardwise
