// How a layout is served in simulation: the simulator's configuration for a layout on an engine
// (replicas, attention-DP ranks, the engine's batch and token limits, KV block size, admission
// and the replica's KV capacity) and the step table it runs on. `simulate` and the load-aware
// planner both build their runs here, so they simulate the same thing. Pure functions.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>

#include "shardwise/common/status.h"
#include "shardwise/hw/cluster.h"
#include "shardwise/layout/deployment.h"
#include "shardwise/layout/layout.h"
#include "shardwise/perf/kv_transfer.h"
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

// The load a disaggregated deployment is checked against: requests arriving per second (an open
// loop; infinite for a closed one) and the most in flight at once (a closed loop's clients;
// infinite for an open one).
struct OfferedLoad {
  double rate_per_s = std::numeric_limits<double>::infinity();
  double max_in_flight = std::numeric_limits<double>::infinity();
};

// A disaggregated deployment ready to simulate: each pool's step table and memory, the KV link
// and transfer, and the simulator's configuration (the prefill pool's replicas, with the decode
// pool pointing at decode_table). Held by pointer: config refers into it.
struct DisaggregatedServing {
  StepTable prefill_table;
  StepTable decode_table;
  StepEstimate prefill_probe;  // one request of the workload's lengths on a prefill worker
  StepEstimate decode_probe;   // on a decode worker
  KvLink link;
  KvTransfer transfer;
  SimConfig config;
};

// Builds the simulation of `deployment` (disaggregated) for requests of `workload`'s lengths up
// to `longest_tokens`: `prefill_step` and `decode_step` model one worker of each pool on its
// cluster. Errors when a pool does not fit in memory (naming the pool) or when the decode pool
// cannot hold what the prefill pool turns out at its full rate (the KV of every request in
// flight there), with the numbers and a fix.
StatusOr<std::unique_ptr<DisaggregatedServing>> BuildDisaggregatedServing(
    const ModelSpec& model, const Deployment& deployment, const StepModel& prefill_step,
    const StepModel& decode_step, const ClusterSpec& prefill_cluster,
    const ClusterSpec& decode_cluster, bool same_cluster, const PerfOptions& perf,
    const Workload& workload, int64_t longest_tokens, int64_t max_batch, Admission admission,
    const OfferedLoad& offered);

}  // namespace shardwise
