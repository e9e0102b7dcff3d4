// The communication of a step under a layout: TP all-reduces, EP dispatch and combine, CP ring
// passes and combines, PP hand-offs; each group placed on the cluster once, each collective
// priced by the collective cost model. Value type; methods are const (thread-safe).
#pragma once

#include <string>

#include "shardwise/collective/group.h"
#include "shardwise/common/status.h"
#include "shardwise/hw/cluster.h"
#include "shardwise/layout/layout.h"

namespace shardwise {

class StepComm {
 public:
  static StatusOr<StepComm> Create(const ClusterSpec& cluster, const Layout& layout);

  // One TP all-reduce of `bytes` (0 without TP).
  double TpAllReduce(double bytes) const;
  // One CP all-reduce combining partial attention outputs of `bytes` (0 without CP).
  double CpCombine(double bytes) const;
  // The cp - 1 ring passes of `bytes` each that one layer's ring attention makes.
  double CpRing(double bytes) const;
  // EP dispatch plus combine of `bytes` per rank, top-k routed (0 without EP).
  double EpDispatchCombine(double bytes, int64_t topk) const;
  // One PP send/recv of `bytes` between adjacent stages (0 without PP).
  double HandOff(double bytes) const;

  // Display name of the link a group's traffic binds on ("nvlink", "scale-out (...)", "-").
  const std::string& tp_link() const { return tp_link_; }
  const std::string& ep_link() const { return ep_link_; }

 private:
  const ClusterSpec* cluster_ = nullptr;
  Layout layout_;
  GroupShape tp_group_, cp_group_, ep_group_, pp_pair_;
  std::string tp_link_ = "-", ep_link_ = "-";
};

}  // namespace shardwise
