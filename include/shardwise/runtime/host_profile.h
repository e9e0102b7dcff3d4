// This machine as the perf model sees it: a rank's matrix FLOP/s and memory bandwidth (one
// core, the runtime's fp32 kernels), the core count, and the threads backend's all-reduce
// latency and bandwidth. Measured once (about a second) and stored as JSON; the CLI turns it
// into a GPU and cluster description so `run` prints the perf model's prediction beside the
// measurement.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "shardwise/common/status.h"

namespace shardwise {

struct HostProfile {
  double flops_per_s = 0;           // fp32 MatMulT, one core
  double copy_bytes_per_s = 0;      // bytes read + written per second, one core
  int cores = 1;
  double allreduce_latency_s = 0;   // 2 ranks, small message
  double allreduce_bytes_per_s = 0; // 2 ranks, large message (algbw)
};

HostProfile MeasureHostProfile();
// Reads a host profile; `source` names it in errors. Core counts above 65,536 are refused.
StatusOr<HostProfile> ParseHostProfile(const nlohmann::json& json, const std::string& source);
StatusOr<HostProfile> LoadHostProfile(const std::string& path);
Status SaveHostProfile(const HostProfile& profile, const std::string& path);
// The default path: $XDG_CACHE_HOME or ~/.cache, then shardwise/host-profile.json.
std::string DefaultHostProfilePath();

}  // namespace shardwise
