#include "cluster_options.h"

#include <fmt/format.h>

#include <cmath>
#include <iostream>

namespace shardwise::cli {

void ClusterOptions::AddTo(CLI::App* sub) {
  sub->add_option("--cluster", cluster, "Catalog cluster name or path to a cluster file")
      ->capture_default_str();
  sub->add_option("--nodes", nodes, "Scale a node-type cluster to N nodes");
  sub->add_option("--gpus", gpus, "Use only the first N GPUs of the cluster");
  sub->add_option("--profile", profile,
                  "Measured level profile (from 'collectives --import') replacing the catalog's "
                  "calibration");
}

StatusOr<ClusterSpec> ClusterOptions::Load() const {
  SW_ASSIGN_OR_RETURN(ClusterSpec c, LoadCluster(cluster));
  if (nodes) {
    SW_ASSIGN_OR_RETURN(c, WithNodes(std::move(c), *nodes));
  }
  if (gpus) {
    SW_ASSIGN_OR_RETURN(c, WithGpus(std::move(c), *gpus));
  }
  if (!profile.empty()) {
    SW_ASSIGN_OR_RETURN(LevelProfile p, LoadProfile(profile));
    if (p.cluster != c.name) {
      std::cerr << fmt::format(
          "shardwise: warning: {} was fitted on cluster '{}' and is applied "
          "to '{}'; its calibration holds only if their links match\n",
          profile, p.cluster, c.name);
    }
    SW_ASSIGN_OR_RETURN(c, ApplyProfile(std::move(c), p));
  }
  return c;
}

std::optional<double> ParseScaledNumber(const std::string& text, double step, bool b_is_giga) {
  if (text.empty()) return std::nullopt;
  int power = 0;
  switch (std::toupper(static_cast<unsigned char>(text.back()))) {
    case 'K':
      power = 1;
      break;
    case 'M':
      power = 2;
      break;
    case 'B':
      power = b_is_giga ? 3 : 0;
      break;
    case 'G':
      power = 3;
      break;
    case 'T':
      power = 4;
      break;
    default:
      break;
  }
  const std::string digits = power > 0 ? text.substr(0, text.size() - 1) : text;
  size_t used = 0;
  double value = 0;
  try {
    value = std::stod(digits, &used);
  } catch (...) {
    return std::nullopt;
  }
  const double scaled = value * std::pow(step, power);
  if (used == 0 || used != digits.size() || !std::isfinite(scaled)) return std::nullopt;
  return scaled;
}

StatusOr<double> ParseByteSize(const std::string& text, const std::string& option) {
  if (text.empty()) return Error(fmt::format("{} needs a size such as 8, 64K, 1M or 8G", option));
  const std::optional<double> parsed = ParseScaledNumber(text, 1024.0, false);
  if (!parsed) {
    return Error(
        fmt::format("{} '{}' is not a size; use a number with an optional K, M, G or T "
                    "suffix (binary, as nccl-tests)",
                    option, text));
  }
  const double bytes = *parsed;
  if (bytes < 1 || bytes > 1e13) {
    return Error(fmt::format("{} {} is out of range; sizes go from 1 byte to 8T", option, text));
  }
  return bytes;
}

}  // namespace shardwise::cli
