#include "shardwise/collective/group.h"

#include <algorithm>

#include <fmt/format.h>

namespace shardwise {

int GroupShape::HighestLevel() const {
  for (int d = NumLevels() - 1; d >= 0; --d) {
    if (Spans(d)) return d;
  }
  return -1;
}

StatusOr<GroupShape> PlaceGroup(const ClusterSpec& cluster, int64_t size, int64_t stride) {
  if (size <= 0 || stride <= 0) return Error("a group needs a positive size and stride");
  if ((size - 1) * stride + 1 > cluster.num_gpus) {
    return Error(fmt::format("a group of {} ranks with stride {} needs {} GPUs; cluster '{}' has "
                             "{}",
                             size, stride, (size - 1) * stride + 1, cluster.name,
                             cluster.num_gpus));
  }
  GroupShape g;
  g.size = size;
  for (int d = 0; d < static_cast<int>(cluster.levels.size()); ++d) {
    const int64_t unit = cluster.GpusPerUnit(d);
    // Ranks 0, stride, ... that fall in the first unit of this level.
    const int64_t inside = stride >= unit ? 1 : (unit + stride - 1) / stride;
    g.members_per_unit.push_back(std::min(size, inside));
  }
  return g;
}

}  // namespace shardwise
