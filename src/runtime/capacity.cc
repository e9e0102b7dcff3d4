#include "capacity.h"

#include <algorithm>
#include <tuple>

namespace shardwise {

StatusOr<int64_t> DropOverCapacity(Routes& routes, int64_t sequences,
                                   std::span<const int64_t> positions, bool split, Communicator& cp,
                                   double factor, int64_t experts, int64_t k) {
  const int64_t len = static_cast<int64_t>(positions.size()), width = 1 + k;
  const int groups = split ? cp.size() : 1, me = split ? cp.rank() : 0;
  // Every row as [position, its k experts]; gathered over the CP group when the rows are split.
  std::vector<float> mine(static_cast<size_t>(sequences * len * width));
  for (int64_t r = 0; r < sequences * len; ++r) {
    mine[r * width] = static_cast<float>(positions[r % len]);
    for (int64_t j = 0; j < k; ++j)
      mine[r * width + 1 + j] = static_cast<float>(routes[r][j].first);
  }
  std::vector<float> all = mine;
  if (groups > 1) {
    all.resize(mine.size() * static_cast<size_t>(groups));
    SW_RETURN_IF_ERROR(cp.AllGather(mine, all));
  }
  const int64_t capacity = ExpertCapacity(factor, len * groups, k, experts);
  int64_t dropped = 0;
  for (int64_t s = 0; s < sequences; ++s) {
    std::vector<std::tuple<int64_t, int, int64_t>> order;  // position, rank, row
    for (int g = 0; g < groups; ++g) {
      for (int64_t t = 0; t < len; ++t) {
        const int64_t row = s * len + t;
        order.emplace_back(static_cast<int64_t>(all[(g * sequences * len + row) * width]), g, row);
      }
    }
    std::sort(order.begin(), order.end());
    std::vector<std::vector<int64_t>> chosen;
    for (const auto& [position, g, row] : order) {
      const float* e = all.data() + (g * sequences * len + row) * width + 1;
      chosen.emplace_back(e, e + k);
    }
    const std::vector<std::vector<bool>> keep = WithinCapacity(chosen, experts, capacity);
    for (size_t i = 0; i < order.size(); ++i) {
      const auto& [position, g, row] = order[i];
      if (g != me) continue;
      auto& pairs = routes[static_cast<size_t>(row)];
      std::vector<std::pair<int64_t, float>> kept;
      for (int64_t j = 0; j < k; ++j) {
        if (keep[i][static_cast<size_t>(j)]) {
          kept.push_back(pairs[static_cast<size_t>(j)]);
        } else {
          ++dropped;
        }
      }
      pairs = std::move(kept);
    }
  }
  return dropped;
}

}  // namespace shardwise
