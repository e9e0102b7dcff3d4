// The options every cluster-using command shares: --cluster, --nodes, --gpus, --profile.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>

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

// A number with an optional suffix K, M, G or T worth step, step^2, step^3, step^4 (and B =
// G when `b_is_giga`: "300B" tokens); empty when `text` is not such a number or not finite.
std::optional<double> ParseScaledNumber(const std::string& text, double step, bool b_is_giga);

// Parses a byte count with an optional binary suffix, as nccl-tests does: 8, 512K, 1M, 8G.
StatusOr<double> ParseByteSize(const std::string& text, const std::string& option);

}  // namespace shardwise::cli
