#include "shardwise/hw/host_cluster.h"

#include <algorithm>

namespace shardwise {
namespace {

// The host's rates are measured rates of the kernels that run: they are the achievable rates
// themselves, so the achievable fractions of them are one.
constexpr double kMeasuredFraction = 1.0;

}  // namespace

ClusterSpec HostCluster(const HostRates& r, int ranks, int concurrent, int threads) {
  ranks = std::max(1, ranks);
  concurrent = std::clamp(concurrent, 1, ranks);
  threads = std::max(1, threads);
  // Cores a rank computes on: its threads, or its share when the ranks at work outnumber them.
  const double busy_threads = static_cast<double>(concurrent) * threads;
  const double cores_per_rank =
      threads * std::min(1.0, static_cast<double>(r.cores) / busy_threads);
  // Read bandwidth grows with the cores reading, up to what all cores together measured.
  const double cores_reading = std::min(static_cast<double>(r.cores), busy_threads);
  const double read_total =
      std::min(cores_reading * r.read_bytes_per_s, r.read_bytes_per_s_all_cores);
  GpuSpec cpu;
  cpu.name = "this-host";
  cpu.description = "this machine's CPU cores, measured with the runtime's kernels";
  cpu.peak_flops_per_s = {{Dtype::kFp32, r.gemm_flops_per_s * cores_per_rank}};
  cpu.gemm_fraction = {{Dtype::kFp32, kMeasuredFraction}};
  cpu.hbm_bytes = r.memory_bytes / ranks;
  cpu.hbm_bytes_per_s = read_total / concurrent;
  cpu.hbm_fraction = kMeasuredFraction;
  cpu.scale_up_bytes_per_s = r.allreduce_bytes_per_s;
  cpu.nic_bytes_per_s = r.allreduce_bytes_per_s;
  cpu.sm_count = 1;  // no waves of tiles: the measured rate is the whole rank's
  cpu.calibration_measured = true;
  return OneLevelCluster("this-host", cpu, "threads", ranks, r.allreduce_bytes_per_s,
                         r.allreduce_latency_s);
}

ClusterSpec OneLevelCluster(const std::string& name, GpuSpec device, const std::string& level_name,
                            int ranks, double link_bytes_per_s, double launch_latency_s) {
  ClusterSpec c;
  c.name = name;
  c.gpu = std::move(device);
  TopologyLevel level;
  level.name = level_name;
  level.fan_out = std::max(1, ranks);
  level.egress_bytes_per_s = link_bytes_per_s;
  level.efficiency = kMeasuredFraction;
  c.levels = {level};
  c.launch_latency_s = launch_latency_s;
  c.num_gpus = c.Capacity();
  return c;
}

}  // namespace shardwise
