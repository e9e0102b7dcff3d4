#include "gpu_target.h"

#include <fmt/format.h>

#include "shardwise/hw/gpu_match.h"
#include "shardwise/runtime/compute_registry.h"

namespace shardwise::cli {

GpuTarget FindGpuTarget(int ranks) {
  GpuTarget t;
  const std::vector<std::string> names = VisibleGpuNames();
  t.visible_gpus = static_cast<int>(names.size());
  if (names.empty()) {
    t.note = "no GPU visible: no GPU prediction";
    return t;
  }
  t.driver_name = names[0];
  const auto gpus = LoadBuiltinGpus();
  if (!gpus.ok()) {
    t.note = gpus.status().message();
    return t;
  }
  const auto gpu = MatchDriverGpuName(t.driver_name, *gpus);
  if (!gpu.ok()) {
    t.note = gpu.status().message() + "; no prediction";
    return t;
  }
  for (const std::string& name : BuiltinClusterNames()) {
    auto cluster = LoadCluster(name);
    if (!cluster.ok() || cluster->gpu.name != gpu->name || cluster->GpusPerNode() < ranks) continue;
    auto sized = WithGpus(*cluster, ranks);
    if (!sized.ok()) continue;
    if (!t.cluster || sized->GpusPerNode() < t.cluster->GpusPerNode()) t.cluster = *sized;
  }
  if (!t.cluster) {
    t.note = fmt::format("no built-in cluster of {} holds {} ranks on one node; no prediction",
                         gpu->name, ranks);
    return t;
  }
  if (ranks > t.visible_gpus) {
    t.note =
        fmt::format("{} ranks share {} GPU{}: the prediction is for one {} per rank ({})", ranks,
                    t.visible_gpus, t.visible_gpus == 1 ? "" : "s", gpu->name, t.cluster->name);
  } else {
    t.note = fmt::format("predicted for {} x {} in {}", ranks, gpu->name, t.cluster->name);
  }
  return t;
}

}  // namespace shardwise::cli
