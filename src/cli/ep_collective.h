// `shardwise collectives --op ep-dispatch|ep-combine`: one MoE dispatch or combine priced the way
// DeepEP's benchmark reports it (time, and bytes on the binding link per GPU over the time).
#pragma once

#include <CLI/CLI.hpp>

#include "shardwise/api/collectives.h"
#include "shardwise/common/status.h"

namespace shardwise::cli {

// --tokens, --hidden, --experts, --groups, --topk-groups and --dtype.
void AddEpCollectiveOptions(CLI::App* sub, api::EpRequest& request);

// Runs one ep-dispatch or ep-combine on all of the cluster's GPUs and prints it.
Status RunEpCollective(const ClusterSpec& cluster, const api::EpRequest& request, bool json);

}  // namespace shardwise::cli
