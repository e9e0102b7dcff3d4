// The KV-cache transfer of a disaggregated deployment: after a prompt is prefilled on a prefill
// worker, its KV cache moves to a decode worker (NIXL, Mooncake or UCX over RDMA, as Dynamo,
// SGLang and vLLM move it). Every GPU of the prefill worker sends its own shard of the cache at
// once and every decode GPU receives its shard, so the busiest GPU's share over its link sets
// the time. Sent after the prefill, or layer by layer while it runs, leaving exposed what the
// prefill does not hide. Pure functions.
#pragma once

#include <string>
#include <string_view>

#include "shardwise/common/status.h"
#include "shardwise/hw/cluster.h"

namespace shardwise {

// How the KV leaves the prefill worker.
enum class KvTransferMode {
  kAfterPrefill,  // the whole cache once the prompt is done (the engines' default)
  kLayerByLayer,  // each layer's cache as soon as it is written
};
std::string_view KvTransferModeName(KvTransferMode mode);
// "after-prefill" or "layer-by-layer".
StatusOr<KvTransferMode> ParseKvTransferMode(std::string_view text);

// The link one GPU of each pool reaches the other pool's GPUs over.
struct KvLink {
  std::string name;
  double bytes_per_s = 0;  // per GPU, achievable
  double latency_s = 0;
};

// Pools on one cluster: NVLink when both fit in one scale-up domain (`gpus` in all), else the
// scale-out level above it. Pools on two clusters: the slower of their scale-out NICs.
KvLink PoolLink(const ClusterSpec& prefill, const ClusterSpec& decode, bool same_cluster,
                int64_t gpus);

struct KvTransfer {
  double s_per_token = 0;          // the transfer of one prompt token, whole
  double exposed_s_per_token = 0;  // the part the prefill does not hide
  double latency_s = 0;
};

// `prefill_bytes_per_token` and `decode_bytes_per_token`: one token's KV on the busiest GPU of
// each worker (MemoryPerGpu::kv_bytes_per_token); `prefill_s_per_token`: the prefill's time per
// prompt token, which a layer-by-layer transfer hides behind, all but the last of `layers`.
KvTransfer EstimateKvTransfer(const KvLink& link, double prefill_bytes_per_token,
                              double decode_bytes_per_token, KvTransferMode mode,
                              double prefill_s_per_token, double layers);

}  // namespace shardwise
