// Catalog: where every model, GPU, cluster and engine profile a request names comes from: the
// built-in entries (data/, compiled into the binary) and the files a caller names by path. A
// request's cluster is a reference (ClusterRef: a catalog name or file, scaled to a number of
// nodes or GPUs, calibrated by a measured profile, priced at the user's rate) resolved here.
// Immutable; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "shardwise/common/status.h"
#include "shardwise/hw/cluster.h"
#include "shardwise/hw/gpu.h"
#include "shardwise/model/model_spec.h"
#include "shardwise/perf/engine.h"

namespace shardwise::api {

struct ClusterRef {
  std::string name = "dgx-h100";  // catalog name or cluster file
  std::optional<int64_t> nodes;   // unset: as the catalog has it
  std::optional<int64_t> gpus;    // unset: all
  std::string profile;            // a measured level profile (collectives --import)
  // What one of its GPUs costs an hour (a negotiated or reserved rate); unset: the GPU
  // catalog's. Every price, cost and $ per token the request reports uses it.
  std::optional<double> usd_per_gpu_hour;
};

class Catalog {
 public:
  // The entries compiled into the binary, and files by path.
  static const Catalog& BuiltIn();

  StatusOr<ModelSpec> Model(std::string_view name_or_config) const;
  StatusOr<GpuSpec> Gpu(std::string_view name_or_file) const;
  // The cluster with its nodes, GPUs and profile applied. `note` (optional) receives a line for
  // the user when a profile fitted on another cluster is applied.
  StatusOr<ClusterSpec> Cluster(const ClusterRef& ref, std::string* note = nullptr) const;
  StatusOr<EngineProfile> Engine(std::string_view name_or_file) const;
  // The engine profile as its file has it (what Engine parses); `source` receives where.
  StatusOr<nlohmann::json> EngineFile(std::string_view name_or_file, std::string& source) const;

 private:
  Catalog() = default;
};

}  // namespace shardwise::api
