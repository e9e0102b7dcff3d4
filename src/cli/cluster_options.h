// The options every cluster-using command shares: --cluster, --nodes, --gpus, --profile.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "shardwise/common/status.h"
#include "shardwise/hw/cluster.h"

namespace shardwise::cli {

struct ClusterOptions {
  std::string cluster = "dgx-h100";
  std::optional<int64_t> nodes;  // unset: as the catalog has it
  std::optional<int64_t> gpus;   // unset: all
  std::string profile;

  void AddTo(CLI::App* sub);
  // The cluster with --nodes, --gpus and --profile applied.
  StatusOr<ClusterSpec> Load() const;
};

// Parses a byte count with an optional binary suffix, as nccl-tests does: 8, 512K, 1M, 8G.
StatusOr<double> ParseByteSize(const std::string& text, const std::string& option);

}  // namespace shardwise::cli
