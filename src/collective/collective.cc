#include "shardwise/collective/collective.h"

#include <array>
#include <cctype>

#include "shardwise/common/suggest.h"

namespace shardwise {
namespace {

struct OpInfo {
  CollectiveOp op;
  std::string_view name;
};

constexpr std::array<OpInfo, 7> kOps = {{
    {CollectiveOp::kAllReduce, "all-reduce"},
    {CollectiveOp::kAllGather, "all-gather"},
    {CollectiveOp::kReduceScatter, "reduce-scatter"},
    {CollectiveOp::kAllToAll, "all-to-all"},
    {CollectiveOp::kAllToAllTopK, "all-to-all-topk"},
    {CollectiveOp::kSendRecv, "send-recv"},
    {CollectiveOp::kBroadcast, "broadcast"},
}};

// "all_reduce", "allreduce", "AllReduce" -> "all-reduce"
std::string Normalise(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '_' || c == '-' || c == ' ') continue;
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

}  // namespace

std::string_view OpName(CollectiveOp op) {
  for (const OpInfo& info : kOps) {
    if (info.op == op) return info.name;
  }
  return "?";
}

std::vector<std::string> CollectiveOpNames() {
  std::vector<std::string> names;
  for (const OpInfo& info : kOps) names.emplace_back(info.name);
  return names;
}

StatusOr<CollectiveOp> ParseCollectiveOp(std::string_view text) {
  const std::string key = Normalise(text);
  for (const OpInfo& info : kOps) {
    if (Normalise(info.name) == key) return info.op;
  }
  if (key == "alltoallv" || key == "moe" || key == "topk") return CollectiveOp::kAllToAllTopK;
  if (key == "sendrecv" || key == "p2p") return CollectiveOp::kSendRecv;
  return Error(UnknownNameMessage("collective op", text, CollectiveOpNames(),
                                  "use all-reduce, all-gather, reduce-scatter, all-to-all, "
                                  "all-to-all-topk, send-recv or broadcast"));
}

std::string_view AlgorithmName(CollectiveAlgorithm algorithm) {
  switch (algorithm) {
    case CollectiveAlgorithm::kAuto:
      return "auto";
    case CollectiveAlgorithm::kRing:
      return "ring";
    case CollectiveAlgorithm::kTree:
      return "tree";
    case CollectiveAlgorithm::kNvls:
      return "nvls";
    case CollectiveAlgorithm::kDirect:
      return "direct";
  }
  return "?";
}

StatusOr<CollectiveAlgorithm> ParseCollectiveAlgorithm(std::string_view text) {
  for (CollectiveAlgorithm a : {CollectiveAlgorithm::kAuto, CollectiveAlgorithm::kRing,
                                CollectiveAlgorithm::kTree, CollectiveAlgorithm::kNvls,
                                CollectiveAlgorithm::kDirect}) {
    if (AlgorithmName(a) == text) return a;
  }
  return Error(UnknownNameMessage("algorithm", text, {"auto", "ring", "tree", "nvls", "direct"},
                                  "use auto, ring, tree, nvls or direct"));
}

double BusBandwidthFactor(CollectiveOp op, int64_t n) {
  const double nn = static_cast<double>(n);
  switch (op) {
    case CollectiveOp::kAllReduce:
      return 2.0 * (nn - 1) / nn;
    case CollectiveOp::kAllGather:
    case CollectiveOp::kReduceScatter:
    case CollectiveOp::kAllToAll:
    case CollectiveOp::kAllToAllTopK:
      return (nn - 1) / nn;
    case CollectiveOp::kSendRecv:
    case CollectiveOp::kBroadcast:
      return 1.0;
  }
  return 1.0;
}

}  // namespace shardwise
