#include "shardwise/layout/deployment.h"

#include <fmt/format.h>

namespace shardwise {
namespace {

// Most workers of one pool (far above any cluster the catalog describes).
constexpr int64_t kMaxWorkers = 1'000'000;

}  // namespace

std::string_view KvTransferModeName(KvTransferMode mode) {
  return mode == KvTransferMode::kAfterPrefill ? "after-prefill" : "layer-by-layer";
}

StatusOr<KvTransferMode> ParseKvTransferMode(std::string_view text) {
  if (text == "after-prefill") return KvTransferMode::kAfterPrefill;
  if (text == "layer-by-layer") return KvTransferMode::kLayerByLayer;
  return Error(
      fmt::format("--kv-transfer must be after-prefill or layer-by-layer, got '{}'", text));
}

std::string Deployment::ToString() const {
  if (!decode) return prefill.layout.ToString();
  return fmt::format("{}P x {} + {}D x {}", prefill.workers, prefill.layout.ToString(),
                     decode->workers, decode->layout.ToString());
}

StatusOr<Deployment> Disaggregated(const Layout& prefill, int64_t prefill_workers,
                                   const Layout& decode, int64_t decode_workers,
                                   KvTransferMode transfer) {
  if (prefill_workers < 1 || prefill_workers > kMaxWorkers) {
    return Error(fmt::format("--prefill-workers must be between 1 and {}, got {}", kMaxWorkers,
                             prefill_workers));
  }
  if (decode_workers < 1 || decode_workers > kMaxWorkers) {
    return Error(fmt::format("--decode-workers must be between 1 and {}, got {}", kMaxWorkers,
                             decode_workers));
  }
  Deployment d;
  d.prefill = {prefill, prefill_workers};
  d.decode = Pool{decode, decode_workers};
  d.transfer = transfer;
  return d;
}

}  // namespace shardwise
