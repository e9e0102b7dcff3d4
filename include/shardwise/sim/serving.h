// How a layout is served in simulation: the simulator's configuration for a layout on an engine
// (replicas, attention-DP ranks, the engine's batch and token limits, KV block size, admission
// and the replica's KV capacity) and the step table it runs on. `simulate` and the load-aware
// planner both build their runs here, so they simulate the same thing. Pure functions.
#pragma once

#include <cstdint>

#include "shardwise/common/status.h"
#include "shardwise/hw/cluster.h"
#include "shardwise/layout/layout.h"
#include "shardwise/perf/step.h"
#include "shardwise/sim/simulator.h"
#include "shardwise/sim/step_table.h"

namespace shardwise {

// `kv_capacity_tokens` per replica (StepEstimate::memory); `max_batch` sequences per attention
// rank, as engines apply max_num_seqs per DP attention rank (SGLang --enable-dp-attention, vLLM
// data-parallel MoE), so a replica of an attention-DP layout runs up to max_batch x AttentionDp.
SimConfig ServingConfig(const ClusterSpec& cluster, const Layout& layout, const PerfOptions& perf,
                        double kv_capacity_tokens, int64_t max_batch, Admission admission);

// The step table for requests up to `longest_tokens` (prompt + output), batches up to what the
// KV cache admits (`max_sequences`, per replica) within `max_batch` per attention rank.
StatusOr<StepTable> ServingTable(const StepModel& step, const PerfOptions& perf,
                                 int64_t max_sequences, int64_t max_batch, int64_t longest_tokens);

}  // namespace shardwise
