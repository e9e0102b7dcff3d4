// A CPU host as the perf model's device and cluster, built from rates measured on it with the
// runtime's own kernels (runtime/host_profile.h; the CLI passes the numbers across, so hw/
// needs nothing from runtime/). Each rank is a "GPU": its peak FLOP/s is the measured matrix
// rate of the cores it computes on, its memory bandwidth its share of the cores' measured read
// bandwidth, and the link between ranks the measured all-reduce of the threads backend. Also
// the one-level cluster that any measured device (this host, a GPU the catalog lacks) is
// predicted in. Pure functions.
#pragma once

#include <string>

#include "shardwise/hw/cluster.h"

namespace shardwise {

struct HostRates {
  int cores = 1;
  double memory_bytes = 0;
  double gemm_flops_per_s = 0;            // one core, the run's weight storage
  double read_bytes_per_s = 0;            // one core
  double read_bytes_per_s_all_cores = 0;  // every core at once
  double allreduce_latency_s = 0;         // per collective call
  double allreduce_bytes_per_s = 0;       // algbw of a large all-reduce between two ranks
};

// `ranks` ranks of `threads` threads each, `concurrent` of which compute at the same time (a
// pipeline's other stages wait for their input). Ranks that do not fit on the cores share
// them; ranks computing at once share the memory bandwidth, which grows with the cores in use
// up to the all-core measurement.
ClusterSpec HostCluster(const HostRates& rates, int ranks, int concurrent, int threads);

// `device` x `ranks` as a one-level cluster, the ranks joined by a link of `link_bytes_per_s`
// with `launch_latency_s` per collective call.
ClusterSpec OneLevelCluster(const std::string& name, GpuSpec device, const std::string& level_name,
                            int ranks, double link_bytes_per_s, double launch_latency_s);

}  // namespace shardwise
