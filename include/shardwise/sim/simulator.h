// The serving simulator: a discrete-event simulation (binary-heap event queue) of requests
// arriving at DP replicas behind a router, each replica running iteration-level batching with
// chunked prefill, KV-cache admission and LIFO preemption when the cache fills, with iteration
// times from a StepTable. Deterministic for a given request stream. Bounded memory: latency
// distributions live in log histograms; per-request state is a few dozen bytes.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <vector>

#include "shardwise/common/status.h"
#include "shardwise/deploy/deployment.h"
#include "shardwise/deploy/policy.h"
#include "shardwise/model/model_spec.h"
#include "shardwise/sim/samples.h"
#include "shardwise/sim/step_table.h"
#include "shardwise/sim/workload.h"

namespace shardwise {

// A pool of identical replicas (sim/serving.h builds them from a Deployment's pools): an
// aggregated pool prefills and decodes; a disaggregated deployment has a prefill pool, whose
// replicas send each prompt's KV cache to one of the decode pool's (least loaded), where it
// decodes and its first token leaves once the KV has arrived.
struct SimPool {
  const StepTable* table = nullptr;  // the replicas' iteration times
  PoolRole role = PoolRole::kAggregated;
  int64_t replicas = 1;
  int64_t gpus_per_replica = 1;
  int64_t attention_dp = 1;  // attention-DP ranks per replica, each prefilling its own prompts
  // A pipeline of this many stages runs as as many virtual engines (vLLM's; TensorRT-LLM keeps
  // micro-batches in flight alike): each schedules its own requests with `batch`'s limits and
  // 1/stages of the KV cache (vLLM divides the cache's blocks between them), its iterations
  // take the table's time (one micro-batch through every stage) and share the stages with the
  // other engines' iterations, a stage serving one at a time.
  int64_t pipeline_stages = 1;
  BatchPolicy batch;
  double kv_capacity_tokens = 0;  // per replica
  // Fixed recurrent (linear-attention/SSM) state each admitted sequence holds, in KV tokens.
  double state_tokens_per_sequence = 0;
  double peak_flops_per_s = 0;  // per GPU, for MFU
  double usd_per_gpu_hour = 0;
};

struct SimConfig {
  // Aggregated: one pool. Disaggregated: the prefill pool, then the decode pool.
  std::vector<SimPool> pools;
  RouterPolicy router = RoundRobinRouter{};  // over the first pool's replicas
  // Closed loop: this many clients, each sending its next request (lengths from the source,
  // arrival times ignored) the moment its previous one completes, as `vllm bench serve
  // --max-concurrency`, genai-perf and trtllm-bench do. 0: open loop, arrivals from the source.
  int64_t concurrency = 0;
  // The front end (sim/front_end.h): every request reaches the schedulers this long after it was
  // sent, plus the serial tokenization of its prompt; TTFT counts from the send. Requests that
  // reach them at one instant share an iteration; one arriving while an iteration is built or
  // runs waits for the next.
  double request_path_s = 0;
  double tokenize_s_per_token = 0;
  // A closed loop's clients send no request after this time (an open loop's source stops).
  double stop_after_s = std::numeric_limits<double>::infinity();
  // The requests measured, in arrival order: [measure_from, measure_from + measure_count). Those
  // before warm the deployment up; the run ends once every measured one has finished (those
  // after keep its load up meanwhile), and rates are taken over the window from the first
  // measured arrival to the first arrival after them. measure_count < 0: every request, the run
  // drains, and the window is the whole run.
  int64_t measure_from = 0;
  int64_t measure_count = -1;
  // The window runs on until the last measured request finishes instead: an open loop the
  // deployment falls behind, whose arrivals can come far faster than they are served (at 10
  // million requests/s the window of arrivals lasts microseconds and times nothing served).
  bool window_until_drained = false;
  // Where the measured requests' halves (SimResult::halves) part: requests sent from this time
  // on are the second half. Infinite: the later half of measure_count in arrival order (a run of
  // a known count); a run cut off after a duration splits at half of it.
  double halves_split_s = std::numeric_limits<double>::infinity();
  // Fraction of each prompt found in the prefix cache: its prefill starts after those tokens,
  // whose KV its chunks attend to (PerfOptions::prefix_hit_rate).
  double prefix_hit_rate = 0;
  double max_ttft_s = std::numeric_limits<double>::infinity();  // goodput SLOs
  double max_tpot_s = std::numeric_limits<double>::infinity();
  // Disaggregated: the KV transfer of one request's prompt, a fixed latency plus a time per
  // prompt token (the part of it the prefill does not hide).
  double transfer_latency_s = 0;
  double transfer_s_per_token = 0;
  // Called now and then with (requests finished, simulated seconds); may be empty.
  std::function<void(int64_t, double)> progress;

  bool disaggregated() const { return pools.size() == 2; }
};

struct SimResult {
  int64_t requests = 0;  // measured requests finished
  int64_t arrived = 0;   // requests that arrived in all, warm-up and cool-down included
  int64_t preemptions = 0;
  int64_t steps = 0;
  double makespan_s = 0;     // the whole run: first arrival to last event
  double window_s = 0;       // the measured window
  double input_tokens = 0;   // prompts that arrived in the window
  double output_tokens = 0;  // tokens emitted in the window
  // Output tokens the window's arrivals ask for: more than the window emits when the deployment
  // cannot keep up with the load.
  double output_tokens_asked = 0;
  Samples ttft_s, tpot_s, itl_s, e2e_s;
  // Mean TTFT and TPOT of the first and the second half of the measured requests (in arrival
  // order): close in a steady state, apart where a queue grows or the warm-up was too short.
  struct Half {
    double ttft_sum_s = 0;
    double tpot_sum_s = 0;
    double decode_sum_s = 0;  // first token to last, over the requests
    int64_t requests = 0;
    int64_t tpot_requests = 0;  // those with more than one output token
    double TtftMean() const { return requests > 0 ? ttft_sum_s / requests : 0; }
    double TpotMean() const { return tpot_requests > 0 ? tpot_sum_s / tpot_requests : 0; }
    double DecodeMean() const { return requests > 0 ? decode_sum_s / requests : 0; }
  };
  Half halves[2];
  // A run of a known count (all measured): the measured requests in the system (arrived, not
  // finished) when its middle and its last request arrive, and when its first, middle and last
  // arrive; -1 where the run did not reach them.
  int64_t in_system_at_middle = -1, in_system_at_last = -1;
  double first_arrival_s = 0, middle_arrival_s = 0, last_arrival_s = 0;
  double goodput_requests = 0;        // measured requests that met both SLOs
  double goodput_output_tokens = 0;   // their output tokens
  double measured_output_tokens = 0;  // the output tokens of every measured request
  double utilization = 0;             // busy fraction of the GPUs in the window
  double mfu = 0;                     // model FLOPs / (peak x GPUs x window)
  double kv_transfer_s_mean = 0;      // disaggregated: time from prefill done to decode start
  // Time-weighted over the window, fraction of capacity: of every replica, or of a
  // disaggregated deployment's decode pool, where sequences live.
  double kv_occupancy_mean = 0;
  double kv_occupancy_max = 0;
  std::vector<std::pair<double, double>> kv_occupancy;  // (time, fraction), <= 512 samples
  double usd_per_mtok_output = 0;

  double OutputTokensPerS() const { return window_s > 0 ? output_tokens / window_s : 0; }
  // Prompt tokens served per second: the requests served per second times the window's mean
  // prompt (the arrivals' prompt tokens per second in a steady state, less when the queue grows).
  double InputTokensPerS() const {
    return window_arrivals > 0
               ? RequestsPerS() * input_tokens / static_cast<double>(window_arrivals)
               : 0;
  }
  int64_t window_arrivals = 0;  // requests that arrived in the window
  // Requests served per second: the tokens the window emits per second over the tokens its
  // arrivals ask for each (the arrival rate in a steady state, less when the queue grows).
  double RequestsPerS() const {
    if (window_s <= 0 || output_tokens_asked <= 0) return 0;
    return OutputTokensPerS() / (output_tokens_asked / static_cast<double>(window_arrivals));
  }
};

// Checks a configuration before a run: one or two pools with tables, replicas, attention ranks,
// KV room and batch limits, a prefix hit rate in [0, 1], no negative concurrency.
Status CheckSimConfig(const SimConfig& config);
// Checks that request `t` fits the KV cache of one replica of each of `pools` (as their engines
// run them: a pipeline's virtual engine holds 1/stages of its replica's cache).
Status CheckRequestFits(const std::vector<SimPool>& pools, const TraceRequest& t);

// One run of `config` over `source`, measuring config.measure_from and measure_count.
StatusOr<SimResult> Simulate(const ModelSpec& model, RequestSource& source,
                             const SimConfig& config);

namespace sim_state {
class Sim;
}

// A run measured window after window (sim/serving.h's steady state): each Measure goes on from
// where the last one stopped, so the requests before a window, earlier windows included, are its
// warm-up; a window's rates, latencies, goodput and KV transfers are its own, while the run's
// steps, preemptions, makespan and KV occupancy (series and peak) count from its start. `config`
// (its measure_* fields ignored) and `source` must outlive it. Not copyable; not thread-safe.
class Simulation {
 public:
  Simulation(const ModelSpec& model, RequestSource& source, const SimConfig& config);
  ~Simulation();
  Simulation(const Simulation&) = delete;
  Simulation& operator=(const Simulation&) = delete;

  // Runs on until the `count` requests from the `from`-th on (in arrival order, counting from
  // 0) have finished. After the first window, `from` must be at least Arrived(). A config that
  // fails CheckSimConfig gives that error.
  StatusOr<SimResult> Measure(int64_t from, int64_t count);
  // Requests that have arrived so far.
  int64_t Arrived() const;

 private:
  Status config_status_;  // CheckSimConfig's verdict
  std::unique_ptr<sim_state::Sim> sim_;
};

}  // namespace shardwise
