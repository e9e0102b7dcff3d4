// Memory per GPU under a layout: weights, KV cache, activation workspace, communication
// buffers and a runtime reserve, for the fullest pipeline stage; and the most sequences that
// fit at a context. Pure functions.
#pragma once

#include <cstdint>

#include "shardwise/hw/cluster.h"
#include "shardwise/perf/options.h"
#include "shardwise/perf/shard.h"

namespace shardwise {

struct MemoryPerGpu {
  double hbm_bytes = 0;
  double usable_bytes = 0;   // what the engine's memory rule lets weights + KV + buffers use
  double reserve_bytes = 0;  // HBM - usable
  double weight_bytes = 0;
  double kv_bytes = 0;               // the workload's batch at its peak context (KV + state)
  double activation_bytes = 0;       // prefill chunk workspace and logits
  double comm_buffer_bytes = 0;      // NCCL buffers of each communicator
  double kv_bytes_per_sequence = 0;  // one sequence at the peak context, on one GPU (KV + state)
  // What kv_bytes_per_sequence holds whatever the context: the recurrent (linear-attention/SSM)
  // state and the KV of sliding-window layers (beside full-attention ones), at most a window.
  double state_bytes_per_sequence = 0;
  // The same in units of KV tokens of the fullest stage (the simulator reserves it per sequence).
  double state_tokens_per_sequence = 0;
  int64_t max_sequences = 0;      // per instance, at the peak context
  double kv_capacity_tokens = 0;  // per instance: KV tokens that fit beside weights and buffers
  // One token across the fullest stage's growing-KV layers (full attention), one GPU.
  double kv_bytes_per_token = 0;

  double UsedBytes() const {
    return weight_bytes + kv_bytes + activation_bytes + comm_buffer_bytes;
  }
  bool Fits() const { return UsedBytes() <= usable_bytes; }
  double ShortfallBytes() const { return UsedBytes() - usable_bytes; }
};

// A speculative draft's memory on one GPU of the last pipeline stage: its weights and the KV
// one token of context keeps across its layers.
struct DraftMemory {
  double weight_bytes = 0;
  double kv_bytes_per_token = 0;
};

MemoryPerGpu EstimateMemory(const ModelShard& shard, const ClusterSpec& cluster,
                            const Workload& workload, const PerfOptions& options,
                            const DraftMemory& draft = {});

}  // namespace shardwise
