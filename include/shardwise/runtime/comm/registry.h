// The one place that knows which communicator backends exist in this build. "threads" is
// always there; "mpi" when built with Open MPI (CMake option SHARDWISE_WITH_MPI).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "shardwise/common/status.h"
#include "shardwise/runtime/comm/communicator.h"

namespace shardwise {

std::vector<std::string> BackendNames();

// Whether `backend` can run `ranks` ranks (threads: at most 256 in one process).
Status CheckRankCount(const std::string& backend, int64_t ranks);

// Runs body(comm) on `ranks` ranks of `backend`. threads: spawns them; mpi: this process is one
// rank of an mpirun job that must have exactly `ranks` processes. Collectives fail after
// `timeout_s`. Returns this process's result (threads: the first failure, if any).
Status LaunchRanks(const std::string& backend, int ranks, double timeout_s,
                   const std::function<Status(Communicator&)>& body);

// After a failure under a multi-process backend, ends every rank with `exit_code` (peers may
// be blocked in a collective). No-op for threads.
void AbortPeers(const std::string& backend, int exit_code);

// This process's rank in the backend's world (0 for threads).
int ProcessRank(const std::string& backend);

}  // namespace shardwise
