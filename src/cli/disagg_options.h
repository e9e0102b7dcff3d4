// The options that describe a disaggregated deployment, shared by explain, simulate and price:
// --prefill-layout, --decode-layout, --prefill-workers, --decode-workers, --prefill-cluster and
// --kv-transfer.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>

#include "shardwise/common/status.h"
#include "shardwise/hw/cluster.h"
#include "shardwise/layout/deployment.h"
#include "shardwise/perf/options.h"

namespace shardwise::cli {

struct DisaggCliOptions {
  std::string prefill_layout;
  std::string decode_layout;
  int64_t prefill_workers = 1;
  int64_t decode_workers = 1;
  std::string prefill_cluster;                       // empty: the --cluster the decode pool runs on
  std::optional<int64_t> prefill_redundant_experts;  // unset: --redundant-experts
  std::string prefill_shared_experts;                // empty: --shared-experts
  std::string kv_transfer = "after-prefill";

  void AddTo(CLI::App* sub);
  // Whether any of the options was given.
  bool Given() const { return !prefill_layout.empty() || !decode_layout.empty(); }
};

// A disaggregated deployment and where its pools run.
struct DisaggSetup {
  Deployment deployment;
  ClusterSpec prefill_cluster;
  ClusterSpec decode_cluster;
  bool same_cluster = true;
  std::optional<int64_t> prefill_redundant_experts;
  std::optional<bool> prefill_shared_experts_routed;

  // The prefill pool's options: `perf` with its own redundant and shared experts when given.
  PerfOptions PrefillPerf(const PerfOptions& perf) const;
  // Both pools' layouts against their --redundant-experts (CheckRedundantExperts).
  Status CheckPools(const PerfOptions& perf) const;
};

// Checks the options against `cluster` (the decode pool's, and the prefill pool's unless
// --prefill-cluster names another) and `layout_given` (--layout excludes them). The pools of one
// cluster must fit in it together; on two clusters each in its own.
StatusOr<DisaggSetup> BuildDisaggSetup(const DisaggCliOptions& options, const ClusterSpec& cluster,
                                       bool layout_given);

}  // namespace shardwise::cli
