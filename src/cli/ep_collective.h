// `shardwise collectives --op ep-dispatch|ep-combine`: one MoE dispatch or combine priced the way
// DeepEP's benchmark reports it (time, and bytes on the binding link per GPU over the time).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

#include "shardwise/common/status.h"
#include "shardwise/hw/cluster.h"

namespace shardwise::cli {

struct EpCollectiveOptions {
  double tokens = 4096;
  int64_t hidden = 7168;
  int64_t experts = 256;
  int64_t groups = 1;
  int64_t topk_groups = 1;
  std::string dtype;  // empty: fp8 for dispatch, bf16 for combine (as DeepEP)

  void AddTo(CLI::App* sub);
};

// True for the op names this file handles.
bool IsEpCollective(const std::string& op);

// Runs one ep-dispatch or ep-combine on all of the cluster's GPUs.
Status RunEpCollective(const ClusterSpec& cluster, const EpCollectiveOptions& options,
                       const std::string& op, const std::string& algo, int64_t topk, bool json);

}  // namespace shardwise::cli
