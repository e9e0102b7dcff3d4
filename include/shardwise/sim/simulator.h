// The serving simulator: a discrete-event simulation (binary-heap event queue) of requests
// arriving at DP replicas behind a router, each replica running iteration-level batching with
// chunked prefill, KV-cache admission and LIFO preemption when the cache fills, with iteration
// times from a StepTable. Deterministic for a given request stream. Bounded memory: latency
// distributions live in log histograms; per-request state is a few dozen bytes.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <vector>

#include "shardwise/common/status.h"
#include "shardwise/model/model_spec.h"
#include "shardwise/sim/histogram.h"
#include "shardwise/sim/policy.h"
#include "shardwise/sim/step_table.h"
#include "shardwise/sim/workload.h"

namespace shardwise {

// The decode pool of a disaggregated deployment: the replicas of SimConfig then only prefill;
// a request whose prompt is done sends its KV cache to one of these replicas (least loaded) and
// decodes there. Its first token leaves once the KV has arrived.
struct DecodePoolConfig {
  const StepTable* table = nullptr;  // the decode replicas' iteration times
  int64_t replicas = 1;
  int64_t gpus_per_replica = 1;
  int64_t attention_dp = 1;
  BatchPolicy batch;
  double kv_capacity_tokens = 0;  // per replica
  double state_tokens_per_sequence = 0;
  double peak_flops_per_s = 0;  // per GPU, for MFU
  double usd_per_gpu_hour = 0;
  // The KV transfer of one request's prompt: a fixed latency plus a time per prompt token (the
  // part of it the prefill does not hide).
  double transfer_latency_s = 0;
  double transfer_s_per_token = 0;
};

struct SimConfig {
  int64_t replicas = 1;
  int64_t gpus_per_replica = 1;
  int64_t attention_dp = 1;  // attention-DP ranks per replica, each prefilling its own prompts
  BatchPolicy batch;
  RouterPolicy router = RoundRobinRouter{};
  double kv_capacity_tokens = 0;  // per replica
  // Closed loop: this many clients, each sending its next request (lengths from the source,
  // arrival times ignored) the moment its previous one completes, as `vllm bench serve
  // --max-concurrency`, genai-perf and trtllm-bench do. 0: open loop, arrivals from the source.
  int64_t concurrency = 0;
  // Fraction of each prompt found in the prefix cache: its prefill starts after those tokens,
  // whose KV its chunks attend to (PerfOptions::prefix_hit_rate).
  double prefix_hit_rate = 0;
  // Fixed recurrent (linear-attention/SSM) state each admitted sequence holds, in KV tokens.
  double state_tokens_per_sequence = 0;
  double max_ttft_s = std::numeric_limits<double>::infinity();  // goodput SLOs
  double max_tpot_s = std::numeric_limits<double>::infinity();
  double peak_flops_per_s = 0;  // per GPU, for MFU
  double usd_per_gpu_hour = 0;
  // Set: a disaggregated deployment, the replicas above its prefill pool.
  std::optional<DecodePoolConfig> decode_pool;
  // Called now and then with (requests finished, simulated seconds); may be empty.
  std::function<void(int64_t, double)> progress;
};

struct SimResult {
  int64_t requests = 0;
  int64_t preemptions = 0;
  int64_t steps = 0;
  double makespan_s = 0;
  double input_tokens = 0;
  double output_tokens = 0;
  LogHistogram ttft_s, tpot_s, itl_s, e2e_s;
  double goodput_requests = 0;       // requests that met both SLOs
  double goodput_output_tokens = 0;  // their output tokens
  double utilization = 0;            // busy fraction of the GPUs
  double mfu = 0;                    // model FLOPs / (peak x GPUs x makespan)
  double kv_transfer_s_mean = 0;     // disaggregated: time from prefill done to decode start
  double kv_occupancy_mean = 0;      // time-weighted, fraction of capacity
  double kv_occupancy_max = 0;
  std::vector<std::pair<double, double>> kv_occupancy;  // (time, fraction), <= 512 samples
  double usd_per_mtok_output = 0;

  double OutputTokensPerS() const { return makespan_s > 0 ? output_tokens / makespan_s : 0; }
  double InputTokensPerS() const { return makespan_s > 0 ? input_tokens / makespan_s : 0; }
};

StatusOr<SimResult> Simulate(const ModelSpec& model, const StepTable& table, RequestSource& source,
                             const SimConfig& config);

}  // namespace shardwise
