#include "shardwise/api/catalog.h"

#include <fmt/format.h>

#include "shardwise/api/options.h"
#include "shardwise/model/catalog.h"

namespace shardwise::api {

const Catalog& Catalog::BuiltIn() {
  static const Catalog catalog;
  return catalog;
}

StatusOr<ModelSpec> Catalog::Model(std::string_view name_or_config) const {
  return LoadModel(std::string(name_or_config));
}

StatusOr<GpuSpec> Catalog::Gpu(std::string_view name_or_file) const {
  return LoadGpu(name_or_file);
}

StatusOr<ClusterSpec> Catalog::Cluster(const ClusterRef& ref, std::string* note) const {
  SW_ASSIGN_OR_RETURN(ClusterSpec c, LoadCluster(ref.name));
  if (ref.nodes) {
    StatusOr<ClusterSpec> scaled = WithNodes(std::move(c), *ref.nodes);
    if (!scaled.ok()) return scaled.status().WithField("nodes");
    c = std::move(scaled).value();
  }
  if (ref.gpus) {
    StatusOr<ClusterSpec> cut = WithGpus(std::move(c), *ref.gpus);
    if (!cut.ok()) return cut.status().WithField("gpus");
    c = std::move(cut).value();
  }
  if (!ref.profile.empty()) {
    SW_ASSIGN_OR_RETURN(LevelProfile p, LoadProfile(ref.profile));
    if (p.cluster != c.name && note != nullptr) {
      *note = fmt::format(
          "{} was fitted on cluster '{}' and is applied to '{}'; its calibration holds only if "
          "their links match",
          ref.profile, p.cluster, c.name);
    }
    SW_ASSIGN_OR_RETURN(c, ApplyProfile(std::move(c), p));
  }
  if (ref.usd_per_gpu_hour) {
    SW_RETURN_IF_ERROR(CheckGpuPrice(ref.usd_per_gpu_hour));
    c.gpu.usd_per_gpu_hour = *ref.usd_per_gpu_hour;
  }
  return c;
}

StatusOr<EngineProfile> Catalog::Engine(std::string_view name_or_file) const {
  StatusOr<EngineProfile> e = LoadEngine(name_or_file);
  if (!e.ok()) return e.status().WithField("engine");
  return e;
}

StatusOr<nlohmann::json> Catalog::EngineFile(std::string_view name_or_file,
                                             std::string& source) const {
  StatusOr<nlohmann::json> e = LoadEngineJson(name_or_file, source);
  if (!e.ok()) return e.status().WithField("engine");
  return e;
}

}  // namespace shardwise::api
