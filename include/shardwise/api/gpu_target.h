// What a run whose ranks compute on CUDA is predicted against: the GPU the driver reports,
// matched to the catalog, inside the smallest built-in cluster of that GPU holding the ranks
// (one GPU per rank). When ranks share GPUs or the GPU is not in the catalog, `note` says so.
#pragma once

#include <optional>
#include <string>

#include "shardwise/hw/cluster.h"

namespace shardwise::api {

struct GpuTarget {
  std::string driver_name;  // e.g. "NVIDIA H100 80GB HBM3"; empty without a GPU
  int visible_gpus = 0;
  std::optional<ClusterSpec> cluster;  // absent: no prediction (see note)
  std::string note;                    // one sentence for the user, possibly empty
};

GpuTarget FindGpuTarget(int ranks);

}  // namespace shardwise::api
