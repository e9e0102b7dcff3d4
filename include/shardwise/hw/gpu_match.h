// Which catalog GPU a driver's device name denotes (the runtime reads "NVIDIA H100 80GB HBM3"
// from cudaGetDeviceProperties; the catalog says "NVIDIA H100 SXM5 80GB HBM3"). Pure; thread-safe.
#pragma once

#include <string_view>
#include <vector>

#include "shardwise/common/status.h"
#include "shardwise/hw/cluster.h"
#include "shardwise/hw/gpu.h"

namespace shardwise {

// The GPU of `gpus` whose description shares the driver name's model tokens (those holding a
// digit, other than memory sizes such as "80GB": H100, A100, 4090, ...) and, among those, the
// most words. An error names the driver name when none or several match equally well.
StatusOr<GpuSpec> MatchDriverGpuName(std::string_view driver_name,
                                     const std::vector<GpuSpec>& gpus);

// The smallest built-in cluster of `gpu` with at least `gpus` GPUs in one node, cut to `gpus`
// (what a run on this machine's GPUs is predicted against). An error names the GPU when none.
StatusOr<ClusterSpec> SingleNodeClusterOf(const GpuSpec& gpu, int64_t gpus);

}  // namespace shardwise
