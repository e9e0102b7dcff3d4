// A deployment: how a model is served on a set of GPUs. Aggregated: one layout whose replicas
// each prefill and decode (continuous batching). Disaggregated: a prefill pool and a decode pool,
// each `workers` instances of its own layout (possibly on another GPU type), with each request's
// KV cache sent from its prefill worker to a decode worker (DistServe, Splitwise; NVIDIA Dynamo,
// SGLang and vLLM deploy it as xPyD). The planner produces one; explain, simulate, price and the
// launch-config emitters consume it. Value type.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "shardwise/common/status.h"
#include "shardwise/layout/layout.h"

namespace shardwise {

// How the KV leaves the prefill worker.
enum class KvTransferMode {
  kAfterPrefill,  // the whole cache once the prompt is done (the engines' default)
  kLayerByLayer,  // each layer's cache as soon as it is written
};
std::string_view KvTransferModeName(KvTransferMode mode);
StatusOr<KvTransferMode> ParseKvTransferMode(std::string_view text);

struct Pool {
  Layout layout;
  int64_t workers = 1;  // instances of the layout

  int64_t Gpus() const { return workers * layout.gpus(); }
};

struct Deployment {
  Pool prefill;                // aggregated: the one pool, which also decodes
  std::optional<Pool> decode;  // set: disaggregated
  KvTransferMode transfer = KvTransferMode::kAfterPrefill;

  bool Disaggregated() const { return decode.has_value(); }
  int64_t Gpus() const { return prefill.Gpus() + (decode ? decode->Gpus() : 0); }
  // "tp8", or "2P x tp8 + 1D x dp16ep16" (xPyD).
  std::string ToString() const;
};

// A disaggregated deployment; the worker counts must be at least 1 (the error names the option).
StatusOr<Deployment> Disaggregated(const Layout& prefill, int64_t prefill_workers,
                                   const Layout& decode, int64_t decode_workers,
                                   KvTransferMode transfer);

}  // namespace shardwise
