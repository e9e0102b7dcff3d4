// This machine as the perf model sees it, measured with the runtime's own kernels: the matrix
// product rate of one core for each weight storage (a prefill-shaped product), the read
// bandwidth of the decode kernel (one row of activations against a matrix far larger than the
// caches) on one core and on all cores, the memory size, the core count, and the threads
// backend's all-reduce latency and bandwidth, each the median of a few passes (the sustained
// rate a run gets, not its luckiest moment). Measured once (a few seconds) and stored as JSON;
// hw/host_cluster.h turns it into a device and cluster for the perf model.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "shardwise/common/status.h"
#include "shardwise/runtime/weight_matrix.h"

namespace shardwise {

struct HostProfile {
  int cores = 1;
  double memory_bytes = 0;
  // One core, [128 x 768] x [768 x 2048] (small-dense's FFN at a 128-token prefill).
  double gemm_flops_per_s_fp32 = 0;
  double gemm_flops_per_s_bf16 = 0;
  double gemm_flops_per_s_int8 = 0;
  double read_bytes_per_s = 0;            // decode kernel, one core
  double read_bytes_per_s_all_cores = 0;  // decode kernel, one thread per core
  double allreduce_latency_s = 0;         // 2 ranks, small message
  double allreduce_bytes_per_s = 0;       // 2 ranks, large message (algbw)

  double GemmFlopsPerS(WeightStorage storage) const;
};

HostProfile MeasureHostProfile();
// Reads a host profile; `source` names it in errors. Core counts above 65,536 are refused.
StatusOr<HostProfile> ParseHostProfile(const nlohmann::json& json, const std::string& source);
StatusOr<HostProfile> LoadHostProfile(const std::string& path);
Status SaveHostProfile(const HostProfile& profile, const std::string& path);
// The default path: $XDG_CACHE_HOME or ~/.cache, then shardwise/host-profile.json.
std::string DefaultHostProfilePath();

}  // namespace shardwise
