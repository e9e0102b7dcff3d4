// LogHistogram: percentiles of positive values in bounded memory (a fixed number of
// log-spaced buckets, ~1% relative width), with weighted adds so a decode step can record the
// same inter-token gap for all its sequences at once. A percentile never leaves the range of the
// values added (so equal values give that value at every percentile, never one below their
// mean). Value type; not thread-safe.
#pragma once

#include <cstdint>
#include <vector>

namespace shardwise {

class LogHistogram {
 public:
  LogHistogram();
  void Add(double value, double weight = 1.0);
  double Percentile(double p) const;  // p in [0, 100]; 0 when empty
  double Mean() const { return count_ > 0 ? sum_ / count_ : 0.0; }
  double Count() const { return count_; }

 private:
  std::vector<double> buckets_;
  double count_ = 0;
  double sum_ = 0;
  double min_ = 0;  // of the values added (valid when count_ > 0)
  double max_ = 0;
};

}  // namespace shardwise
