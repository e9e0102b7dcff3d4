#include "shardwise/api/gpu_target.h"

#include <fmt/format.h>

#include <algorithm>

#include "shardwise/hw/gpu_match.h"
#include "shardwise/hw/host_cluster.h"
#include "shardwise/runtime/compute_registry.h"

namespace shardwise::api {
namespace {

// A GPU the catalog does not know, as a one-level cluster built from the rates measured on it:
// bf16 GEMM rate as the peak (fraction 1), copy bandwidth as HBM bandwidth (fraction 1) and,
// as a stand-in, as the link between ranks (ranks on one GPU exchange data through its memory).
ClusterSpec MeasuredCluster(const std::string& driver_name, const MeasuredGpuRates& r, int ranks) {
  GpuSpec g;
  g.name = "measured-gpu";
  g.description = driver_name + ", rates measured by this run";
  g.peak_flops_per_s = {{Dtype::kBf16, r.bf16_flops_per_s}};
  g.gemm_fraction = {{Dtype::kBf16, 1.0}};
  g.hbm_bytes = r.memory_bytes;
  g.hbm_bytes_per_s = r.copy_bytes_per_s;
  g.hbm_fraction = 1.0;
  g.scale_up_bytes_per_s = r.copy_bytes_per_s;
  g.nic_bytes_per_s = r.copy_bytes_per_s;
  g.sm_count = r.sm_count;
  g.calibration_measured = true;
  return OneLevelCluster("this-gpu", g, "gpu", ranks, r.copy_bytes_per_s, 0.0);
}

}  // namespace

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
    const auto rates = MeasureGpuRates();
    if (!rates.ok()) {
      t.note = gpu.status().message() + "; no prediction (" + rates.status().message() + ")";
      return t;
    }
    t.cluster = MeasuredCluster(t.driver_name, *rates, ranks);
    t.note = fmt::format(
        "{}; predicted from its measured rates (bf16 GEMM {:.0f} TFLOP/s, copy {:.0f} GB/s; "
        "collective latency not modelled)",
        gpu.status().message(), rates->bf16_flops_per_s / 1e12, rates->copy_bytes_per_s / 1e9);
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

}  // namespace shardwise::api
