// The Open MPI backend (private to src/runtime/comm; reached through registry.h). Each rank is
// a process of an mpirun job; collectives are MPI's non-blocking ones, polled against a
// deadline so a dead or stalled rank turns into an error instead of a hang.
#pragma once

#include <functional>

#include "shardwise/runtime/comm/communicator.h"

namespace shardwise {

Status RunOnMpi(int ranks, double timeout_s, const std::function<Status(Communicator&)>& body);
void AbortMpi(int exit_code);
int MpiWorldRank();

}  // namespace shardwise
