// What a `shardwise run` needs before it starts: the host memory of its fp32 weights, KV caches
// and activation buffers (all ranks of this process together, and the unsharded reference
// run), so a run that cannot fit is refused with the figure instead of being killed by the
// kernel minutes later. Pure functions; thread-safe.
#pragma once

#include <cstdint>

#include "shardwise/runtime/runner.h"

namespace shardwise {

struct RunMemory {
  double weight_bytes = 0;      // fp32 weights of every rank in this process
  double kv_bytes = 0;          // K and V caches for prompt + generated tokens
  double activation_bytes = 0;  // the largest step's buffers (prefill) and the logits
  double reference_bytes = 0;   // the unsharded reference run (runs after the sharded one)

  // The peak: the sharded run or, after it, the reference run.
  double PeakBytes() const;
};

// Estimate for `ranks_here` ranks of the run living in this process (all of them for the
// threads backend, one per process under MPI).
RunMemory EstimateRunMemory(const RunConfig& config, int64_t ranks_here, bool with_reference);

}  // namespace shardwise
