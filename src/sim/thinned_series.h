// A time series of at most kMaxPoints samples over a run of unknown length: every `stride`-th
// offered sample is kept, and when the series fills, every other point is dropped and the stride
// doubles, so the kept points stay evenly spread over the whole run. Internal to sim/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace shardwise {

class ThinnedSeries {
 public:
  static constexpr size_t kMaxPoints = 512;

  // Offers (time, value); appends it to `points` when its turn comes.
  void Offer(double time_s, double value, std::vector<std::pair<double, double>>& points);

 private:
  int64_t tick_ = 0;
  int64_t stride_ = 1;
};

}  // namespace shardwise
