// The in-process backend: each rank is a thread, collectives meet in shared memory. The
// default backend; needs no launcher. A rank that fails or stalls makes the others' pending
// collectives fail within the timeout, naming the ranks that did not arrive.
#pragma once

#include <functional>

#include "shardwise/runtime/comm/communicator.h"

namespace shardwise {

// Runs body(comm) on `ranks` threads, each with its rank's communicator over all of them, and
// returns the first error (a failing rank aborts the others' collectives).
Status RunOnThreads(int ranks, double timeout_s, const std::function<Status(Communicator&)>& body);

}  // namespace shardwise
