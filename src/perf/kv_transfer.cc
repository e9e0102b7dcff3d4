#include "shardwise/perf/kv_transfer.h"

#include <fmt/format.h>

#include <algorithm>

#include "shardwise/common/check.h"

namespace shardwise {

std::string_view KvTransferModeName(KvTransferMode mode) {
  return mode == KvTransferMode::kAfterPrefill ? "after-prefill" : "layer-by-layer";
}

StatusOr<KvTransferMode> ParseKvTransferMode(std::string_view text) {
  if (text == "after-prefill") return KvTransferMode::kAfterPrefill;
  if (text == "layer-by-layer") return KvTransferMode::kLayerByLayer;
  return FieldError("kv_transfer", fmt::format("`kv_transfer` must be after-prefill or "
                                               "layer-by-layer, got '{}'",
                                               text));
}

KvLink PoolLink(const ClusterSpec& prefill, const ClusterSpec& decode, bool same_cluster,
                int64_t gpus) {
  auto scale_out = [](const ClusterSpec& c) {
    KvLink link;
    const int level = c.levels.size() > 1 ? 1 : 0;
    const TopologyLevel& l = c.levels[static_cast<size_t>(level)];
    link.name = l.name;
    link.bytes_per_s = c.PerGpuEgressBytesPerS(level) * l.efficiency;
    link.latency_s = c.launch_latency_s + l.hop_latency_s;
    return link;
  };
  if (same_cluster) {
    const TopologyLevel& nvlink = prefill.levels[0];
    if (gpus <= nvlink.fan_out || prefill.levels.size() == 1) {
      return {nvlink.name, prefill.PerGpuEgressBytesPerS(0) * nvlink.efficiency,
              prefill.launch_latency_s + nvlink.hop_latency_s};
    }
    return scale_out(prefill);
  }
  const KvLink a = scale_out(prefill), b = scale_out(decode);
  KvLink slower = a.bytes_per_s <= b.bytes_per_s ? a : b;
  slower.latency_s = std::max(a.latency_s, b.latency_s);
  return slower;
}

KvTransfer EstimateKvTransfer(const KvLink& link, double prefill_bytes_per_token,
                              double decode_bytes_per_token, KvTransferMode mode,
                              double prefill_s_per_token, double layers) {
  SW_CHECK(link.bytes_per_s > 0 && layers >= 1, "EstimateKvTransfer: no link or no layers");
  KvTransfer t;
  t.latency_s = link.latency_s;
  t.s_per_token = std::max(prefill_bytes_per_token, decode_bytes_per_token) / link.bytes_per_s;
  if (mode == KvTransferMode::kAfterPrefill) {
    t.exposed_s_per_token = t.s_per_token;
  } else {
    // Layer i's cache leaves while layers i + 1.. are prefilled: the last layer's share is
    // always exposed, and whatever the link cannot keep up with.
    t.exposed_s_per_token = std::max(t.s_per_token / layers,
                                     t.s_per_token - prefill_s_per_token * (layers - 1) / layers);
  }
  return t;
}

}  // namespace shardwise
