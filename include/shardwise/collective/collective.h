// Collective operations, the algorithms that implement them, and their nccl-tests conventions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "shardwise/common/status.h"

namespace shardwise {

enum class CollectiveOp {
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kAllToAll,
  kAllToAllTopK,  // ragged: each token goes to k of n ranks (MoE dispatch / combine)
  kSendRecv,
  kBroadcast,
};

enum class CollectiveAlgorithm { kAuto, kRing, kTree, kNvls, kDirect };

std::string_view OpName(CollectiveOp op);
std::string_view AlgorithmName(CollectiveAlgorithm algorithm);
StatusOr<CollectiveOp> ParseCollectiveOp(std::string_view text);
StatusOr<CollectiveAlgorithm> ParseCollectiveAlgorithm(std::string_view text);
std::vector<std::string> CollectiveOpNames();

// nccl-tests' bus-bandwidth factor for `n` ranks (doc/PERFORMANCE.md): all-reduce 2(n-1)/n;
// all-gather, reduce-scatter and all-to-all (n-1)/n; broadcast and send/recv 1.
double BusBandwidthFactor(CollectiveOp op, int64_t n);

}  // namespace shardwise
