// Synthetic clusters with round numbers, so collective costs can be checked by hand.
#pragma once

#include "shardwise/hw/cluster.h"
#include "shardwise/hw/gpu.h"

namespace shardwise::testing {

// `nodes` nodes of 8 GPUs: 450 GB/s scale-up and 50 GB/s NIC per GPU, efficiency 1, no ramp,
// no latency unless given.
inline ClusterSpec IdealCluster(int64_t nodes, double hop_latency_s = 0, double launch_s = 0) {
  ClusterSpec c;
  c.name = "ideal";
  c.gpu = LoadGpu("h100-sxm").value();
  TopologyLevel nvlink;
  nvlink.name = "nvlink";
  nvlink.fan_out = 8;
  nvlink.egress_bytes_per_s = 450e9;
  nvlink.hop_latency_s = hop_latency_s;
  TopologyLevel network;
  network.name = "network";
  network.fan_out = nodes;
  network.egress_bytes_per_s = 50e9;
  network.hop_latency_s = hop_latency_s;
  c.levels = {nvlink, network};
  c.launch_latency_s = launch_s;
  c.num_gpus = c.Capacity();
  return c;
}

}  // namespace shardwise::testing
