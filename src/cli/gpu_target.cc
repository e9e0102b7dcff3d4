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
  auto cluster = SingleNodeClusterOf(*gpu, ranks);
  if (!cluster.ok()) {
    t.note = cluster.status().message() + "; no prediction";
    return t;
  }
  t.cluster = *cluster;
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
