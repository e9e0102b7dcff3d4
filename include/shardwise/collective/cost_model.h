// Predicted time of one collective on a group placed on a cluster: a latency term (a launch
// cost plus one hop latency per algorithm step at the level the step crosses) plus a bandwidth
// term per level the group spans (bytes crossing that level over the egress its members share,
// times the level's calibrated efficiency and message-size ramp). Auto picks the fastest
// applicable algorithm, as NCCL's tuner does. Formulas follow How to Think About GPUs (collectives inside and
// across nodes) and 7 Scaling Across Hardware (ring all-reduce volume). Pure functions; thread-safe.
#pragma once

#include "shardwise/collective/collective.h"
#include "shardwise/collective/group.h"
#include "shardwise/hw/cluster.h"

namespace shardwise {

struct CollectiveRequest {
  CollectiveOp op = CollectiveOp::kAllReduce;
  // The nccl-tests "size": the all-reduce buffer, the all-gather output, the reduce-scatter
  // input, each rank's all-to-all buffer, each rank's token bytes for the top-k all-to-all.
  double bytes = 0;
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::kAuto;
  int64_t topk = 1;  // destinations per token, for kAllToAllTopK
};

struct CollectiveCost {
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::kAuto;
  double time_s = 0;
  double latency_s = 0;    // message-size independent part
  double bandwidth_s = 0;  // the binding level's transfer time
  int binding_level = -1;  // level whose bandwidth term is the largest; -1 if none
  double algbw_bytes_per_s = 0;
  double busbw_bytes_per_s = 0;
};

// Whether `algorithm` can run `op` on this group (auto always can). The error says why not.
Status CheckAlgorithm(const ClusterSpec& cluster, const GroupShape& group, CollectiveOp op,
                      CollectiveAlgorithm algorithm);

// Requires CheckAlgorithm to pass; a group of one costs nothing.
CollectiveCost PredictCollective(const ClusterSpec& cluster, const GroupShape& group,
                                 const CollectiveRequest& request);

// Expected distinct destination ranks of a token routed to k of n ranks uniformly:
// n (1 - (1 - 1/n)^k) (How to Think About GPUs: ragged all-to-all).
double ExpectedDistinctDestinations(int64_t n, int64_t k);

}  // namespace shardwise
