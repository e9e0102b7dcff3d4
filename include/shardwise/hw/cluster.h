// ClusterSpec: a GPU cluster as a tree of levels. Level 0 is the scale-up domain (an NVLink
// node or NVL72 rack, an Infinity Fabric mesh, a PCIe box); each further level groups the units
// below it (leaf / scalable unit, spine). Every level states how fast each GPU can send to GPUs
// in other children of the same unit, the calibrated efficiency, latency and message-size ramp
// of collectives crossing it, and whether its switches reduce in the network (NVLS / SHARP).
// Read from data/clusters/*.json or a user file; every number has its source. Value type.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "shardwise/common/status.h"
#include "shardwise/hw/gpu.h"

namespace shardwise {

struct TopologyLevel {
  std::string name;                   // "nvlink", "leaf", "spine", "network", ...
  int64_t fan_out = 1;                // children per unit (GPUs for level 0)
  double egress_bytes_per_s = 0;      // per GPU, per direction, to other children of its unit
  double switch_bytes_per_s = 0;      // switching capacity of one unit; 0 = never binds
  bool mesh = false;                  // direct links, no switch: a GPU reaches one peer at
                                      // egress / (fan_out - 1) (Infinity Fabric)
  double efficiency = 1;              // achievable fraction of egress for large messages
  double hop_latency_s = 0;           // latency of one algorithm step across this level
  double ramp_bytes = 0;              // message size where half the peak bandwidth is reached
  double ramp_exponent = 1;           // steepness of the ramp
  bool in_network_reduction = false;  // NVLS / SHARP all-reduce inside the switches
  double in_network_fraction = 0;     // in-network all-reduce algbw / egress_bytes_per_s
  std::map<std::string, std::string> sources;
};

struct ClusterSpec {
  std::string name;
  std::string description;
  GpuSpec gpu;
  std::vector<TopologyLevel> levels;  // innermost first
  double launch_latency_s = 0;        // fixed software cost of one collective call
  int64_t num_gpus = 0;               // GPUs in use (<= the product of fan-outs)
  int nodes_level = -1;               // level whose fan-out counts nodes (-1: not scalable)
  // GPUs per host (one operating system, one CUDA device numbering) when the scale-up domain
  // holds several (a GB200 NVL72 compute tray has 4); 0: the domain is one host.
  int64_t gpus_per_host = 0;
  std::map<std::string, std::string> sources;

  // GPUs under one unit of `level` (level -1 is a single GPU).
  int64_t GpusPerUnit(int level) const;
  int64_t GpusPerNode() const { return levels.empty() ? 1 : levels[0].fan_out; }
  // GPUs one host drives: a launched worker larger than this spans hosts.
  int64_t GpusPerHost() const {
    return gpus_per_host > 0 ? std::min(gpus_per_host, GpusPerNode()) : GpusPerNode();
  }
  int64_t Capacity() const { return GpusPerUnit(static_cast<int>(levels.size()) - 1); }
  // Per-GPU egress across `level`, capped by the unit's switching capacity.
  double PerGpuEgressBytesPerS(int level) const;
};

StatusOr<ClusterSpec> ParseClusterSpec(const nlohmann::json& json, const std::string& source);
nlohmann::json ClusterToJson(const ClusterSpec& cluster);

std::vector<std::string> BuiltinClusterNames();
// A built-in cluster by name or a cluster file by path.
StatusOr<ClusterSpec> LoadCluster(std::string_view name_or_path);

// Scales a node-type cluster to `nodes` nodes (sets the fan-out of its nodes level).
StatusOr<ClusterSpec> WithNodes(ClusterSpec cluster, int64_t nodes);
// Uses only the first `gpus` GPUs of the cluster.
StatusOr<ClusterSpec> WithGpus(ClusterSpec cluster, int64_t gpus);

// A measured profile replaces one level's calibration (efficiency, latency, ramp), e.g. as
// fitted from nccl-tests output by FitNcclTests.
struct LevelProfile {
  std::string cluster;  // the cluster it was measured on
  std::string level;
  double efficiency = 1;
  double hop_latency_s = 0;
  double ramp_bytes = 0;
  double ramp_exponent = 1;
  std::string source;  // where the measurement came from
};

nlohmann::json ProfileToJson(const LevelProfile& profile);
StatusOr<LevelProfile> ParseProfile(const nlohmann::json& json, const std::string& source);
StatusOr<LevelProfile> LoadProfile(const std::string& path);
StatusOr<ClusterSpec> ApplyProfile(ClusterSpec cluster, const LevelProfile& profile);

}  // namespace shardwise
