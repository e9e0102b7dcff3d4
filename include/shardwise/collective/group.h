// Where a group of ranks sits on a cluster's tree: how many of its members share each level's
// unit. A layout's TP, EP, DP and PP groups are regular (every stride-th rank), so a group is
// placed from its size and stride. Value type.
#pragma once

#include <cstdint>
#include <vector>

#include "shardwise/common/status.h"
#include "shardwise/hw/cluster.h"

namespace shardwise {

struct GroupShape {
  int64_t size = 1;
  // members_per_unit[d]: group members inside one unit of level d (d = 0 is one NVLink node).
  std::vector<int64_t> members_per_unit;

  // Members inside one child unit of level d (a single GPU for d = 0).
  int64_t MembersPerChild(int d) const { return d == 0 ? 1 : members_per_unit[d - 1]; }
  // Children of one level-d unit the group touches.
  int64_t ChildrenTouched(int d) const { return members_per_unit[d] / MembersPerChild(d); }
  // True when the group's traffic crosses between children of a level-d unit.
  bool Spans(int d) const { return members_per_unit[d] > MembersPerChild(d); }
  // Outermost level the group spans; -1 for a group of one.
  int HighestLevel() const;
  int NumLevels() const { return static_cast<int>(members_per_unit.size()); }
};

// Places ranks {0, stride, 2*stride, ...} (size of them) on the cluster.
StatusOr<GroupShape> PlaceGroup(const ClusterSpec& cluster, int64_t size, int64_t stride = 1);

}  // namespace shardwise
