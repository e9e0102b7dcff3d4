// The NCCL backend (private to src/runtime; reached through registry.h): one rank per GPU,
// non-blocking NCCL communicators whose every call is polled against the deadline
// (ncclCommGetAsyncError, cudaStreamQuery); at the deadline the communicator is aborted
// (ncclCommAbort) and the call fails with the same one-line timeout error as the MPI backend.
// The Communicator interface takes host spans: each call stages its data through device memory.
#pragma once

#include <memory>

#include "shardwise/runtime/comm/communicator.h"

namespace shardwise {

// Builds an NCCL communicator over the ranks of `bootstrap` (threads or MPI), rank r driving
// GPU `device`: rank 0's ncclUniqueId travels by bootstrap.Broadcast. Every rank calls this.
StatusOr<std::unique_ptr<Communicator>> NcclWorld(Communicator& bootstrap, int device,
                                                  double timeout_s);

}  // namespace shardwise
