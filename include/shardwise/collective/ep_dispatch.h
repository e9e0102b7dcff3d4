// Expert-parallel dispatch and combine: the all-to-all that sends each token to the ranks
// holding its top-k experts and brings the expert outputs back. Three algorithms, as the
// engines run them:
//   - flat: NCCL all-to-all(v), each token sent once to every distinct destination rank;
//   - node-dedup: DeepEP's normal (throughput) kernels, each token sent over RDMA once per
//     destination node and fanned out over NVLink there;
//   - low-latency: DeepEP's low-latency kernels (pplx-kernels alike), one direct send per
//     selected expert, no CPU synchronisation.
// Group-limited routing (DeepSeek's n_group / topk_group) bounds the nodes a token reaches.
// Dispatch and combine carry their own formats (DeepEP dispatches fp8 with per-128 scales and
// combines bf16). The kernels' achieved fraction of line rate, fixed latency and SM use are
// catalog data (data/kernels/ep-dispatch.json). Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "shardwise/collective/group.h"
#include "shardwise/common/status.h"
#include "shardwise/hw/cluster.h"
#include "shardwise/model/dtype.h"

namespace shardwise {

enum class EpAlgorithm { kAuto, kFlat, kNodeDedup, kLowLatency };

std::string_view EpAlgorithmName(EpAlgorithm algorithm);
StatusOr<EpAlgorithm> ParseEpAlgorithm(std::string_view text);

// Calibration of the DeepEP-class kernels; the flat algorithm uses the cluster's NCCL levels.
struct EpKernelProfile {
  double scale_up_efficiency = 0;    // achieved fraction of NVLink line rate
  double scale_out_efficiency = 0;   // achieved fraction of NIC line rate
  double normal_latency_s = 0;       // fixed cost of one node-dedup kernel
  double low_latency_latency_s = 0;  // fixed cost of one low-latency kernel
  int64_t normal_sms = 0;            // SMs a node-dedup kernel occupies while it runs
  int64_t low_latency_sms = 0;
  // The most tokens a rank dispatches through the low-latency kernels when `auto` chooses
  // (their buffers are sized for it); 0: no limit.
  double low_latency_max_tokens_per_rank = 0;
  double fp8_scale_bytes_per_element = 0;  // scale bytes an fp8 payload carries per element
  std::map<std::string, std::string> sources;
};

// The built-in profile (data/kernels/ep-dispatch.json).
StatusOr<EpKernelProfile> LoadEpKernelProfile();

// How tokens choose experts: top-k of `experts`, within the best `topk_groups` of `groups`
// equal groups of consecutive experts (1 of 1: no group limit).
struct EpRouting {
  int64_t experts = 1;
  int64_t topk = 1;
  int64_t groups = 1;
  int64_t topk_groups = 1;
};

// Checks routing against an EP group: top-k within the selected groups' experts, groups divide
// the experts. The error names the option.
Status ValidateEpRouting(const EpRouting& routing);

// Expected destinations of one token when the experts are spread evenly and in order over
// `ranks` ranks, `ranks_per_node` per node, and the token picks its groups and then its experts
// uniformly (sampling without replacement).
struct EpDestinations {
  double nodes = 0;         // distinct nodes, the sender's own included
  double remote_nodes = 0;  // distinct nodes other than the sender's
  double ranks = 0;         // distinct ranks, the sender's own included
};
EpDestinations ExpectedEpDestinations(const EpRouting& routing, int64_t ranks,
                                      int64_t ranks_per_node);

// Dispatch and combine move the same bytes in opposite directions; they differ in format.
struct EpDispatchRequest {
  double tokens_per_gpu = 0;
  int64_t hidden = 0;
  Dtype dtype = Dtype::kBf16;  // fp8 adds the per-128 scales; others their element size
  EpRouting routing;
  EpAlgorithm algorithm = EpAlgorithm::kAuto;
  // Decode runs as a captured CUDA graph: auto then skips the node-dedup kernels, which
  // synchronise with the CPU to size their receive buffers and cannot be captured (DeepEP
  // README; SGLang's --deepep-mode auto likewise runs normal kernels for prefill only).
  bool cuda_graph = false;
  // The tokens a rank dispatches of its own, which the low-latency kernels' buffers must hold
  // (tokens_per_gpu may be the busiest rank's receive); 0: tokens_per_gpu.
  double tokens_sent_per_rank = 0;
};

struct EpDispatchCost {
  EpAlgorithm algorithm = EpAlgorithm::kFlat;
  double time_s = 0;
  double latency_s = 0;
  double token_bytes = 0;           // one token's payload
  double scale_up_wire_bytes = 0;   // per GPU, over NVLink (the scale-up level)
  double scale_out_wire_bytes = 0;  // per GPU, over the NIC
  // Rates as DeepEP's benchmark counts them: NVLink = bytes received per GPU (own copy
  // included); RDMA = token bytes x destination nodes, the sender's own node included.
  double nvlink_bytes_per_s = 0;
  double rdma_bytes_per_s = 0;
  std::string bottleneck_link = "-";  // "nvlink" or "rdma"
  double bottleneck_bytes_per_s = 0;  // the bottleneck link's rate as above
  int64_t sms = 0;                    // SMs the kernel occupies while it runs
};

// Requires ValidateEpRouting to pass. A group of one costs nothing.
EpDispatchCost PredictEpDispatch(const ClusterSpec& cluster, const GroupShape& group,
                                 const EpKernelProfile& profile, const EpDispatchRequest& request);

}  // namespace shardwise
