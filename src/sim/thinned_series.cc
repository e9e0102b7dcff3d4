#include "thinned_series.h"

namespace shardwise {

void ThinnedSeries::Offer(double time_s, double value,
                          std::vector<std::pair<double, double>>& points) {
  if (++tick_ % stride_ != 0) return;
  points.emplace_back(time_s, value);
  if (points.size() < kMaxPoints) return;
  std::vector<std::pair<double, double>> kept;
  for (size_t i = 0; i < points.size(); i += 2) kept.push_back(points[i]);
  points = std::move(kept);
  stride_ *= 2;
}

}  // namespace shardwise
