// Token dropping at a capacity limit, applied to a MoE layer's routes. Capacity groups are
// sequences (GShard's groups): each sequence's tokens of one step compete, in position order,
// for ceil(factor x tokens x k / experts) slots per expert, so what is dropped depends on the
// prompts and the factor, never on the layout. Under a CP prefill the routing choices of the
// whole CP group are gathered first, so every rank drops exactly what the unsharded run drops.
#pragma once

#include <cstdint>
#include <span>

#include "routing.h"
#include "shardwise/common/status.h"
#include "shardwise/runtime/comm/communicator.h"

namespace shardwise {

// routes: `sequences` x positions.size() rows, sequence-major, k experts each, at absolute
// `positions`; `split`: the rows are this CP rank's share of the group's (`cp`). Removes the
// pairs over capacity and returns how many it removed.
StatusOr<int64_t> DropOverCapacity(Routes& routes, int64_t sequences,
                                   std::span<const int64_t> positions, bool split, Communicator& cp,
                                   double factor, int64_t experts, int64_t k);

}  // namespace shardwise
