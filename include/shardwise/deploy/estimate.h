// The analytic estimate of a deployment: each pool's step model and what one of its workers does
// (one prompt's prefill, its memory, its decode at the largest batch it holds), the requests per
// second each pool serves at full load, the KV transfer between disaggregated pools, the
// unloaded TTFT, and the worker counts that balance the pools. The one place this arithmetic
// lives: explain, simulate, plan, recommend and price all read it from here. Pure functions;
// the step models are shared, immutable and thread-safe.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "shardwise/common/status.h"
#include "shardwise/deploy/deployment.h"
#include "shardwise/perf/kv_transfer.h"
#include "shardwise/perf/step.h"

namespace shardwise {

struct PoolEstimate {
  std::shared_ptr<const StepModel> step;  // one worker's layout on the pool's cluster
  StepEstimate one;                       // one request of the workload: its prefill, memory
  // The decode batch per worker: the one asked for, else the most the KV cache holds within
  // max_batch per attention rank; and the step there.
  int64_t decode_batch = 1;
  StepEstimate at_batch;
  // The requests per second the whole pool serves at full load: an aggregated pool cycles its
  // batch through prefill and decode; a prefill pool packs whole prompts into each attention
  // rank's token budget; a decode pool holds decode_batch sequences per worker for OSL steps.
  double requests_per_s = 0;
};

struct DeploymentEstimate {
  std::vector<PoolEstimate> pools;  // in the deployment's order (prefill first)
  // Disaggregated: the link the KV crosses and its transfer (zero otherwise).
  KvLink link;
  KvTransfer transfer;
  double transfer_s = 0;       // one prompt's exposed transfer: latency + exposed per token
  double unloaded_ttft_s = 0;  // one prompt's prefill plus its exposed KV transfer
  double decode_tpot_s = 0;    // the decode pool's step at decode_batch, per token it yields
  // The slowest pool's rate, or the front ends' where they pass fewer requests.
  double capacity_requests_per_s = 0;
  // What the first pool's API servers tokenize a second, one prompt at a time each (infinite
  // where the engine charges no tokenizing time).
  double front_end_requests_per_s = std::numeric_limits<double>::infinity();
  int64_t api_servers = 1;  // one per replica of the first pool
  // What the first pool passes a second: its rate, or its API servers' where that is less.
  double passed_requests_per_s = 0;
  // Disaggregated: decode workers that keep up with the prefill pool (what it passes over one
  // decode worker's rate).
  double balanced_decode_workers = 0;

  const PoolEstimate& prefill() const { return pools.front(); }
  const PoolEstimate& decode() const { return pools.back(); }
};

// The estimate for requests of `lengths`' prompt and output tokens; `decode_batch` fixes the
// decode pool's batch per worker (explain's), else the largest that fits. Errors when a pool's
// layout does not fit one request in memory (with the numbers and the fix), naming the pool of
// a disaggregated deployment.
StatusOr<DeploymentEstimate> EstimateDeployment(const ModelSpec& model,
                                                const Deployment& deployment,
                                                const Workload& lengths,
                                                std::optional<int64_t> decode_batch = {});

// Requests per second one worker of `step`'s layout prefills at full load: each iteration packs
// whole prompts of `prompt_tokens` (or a chunk of a longer one) into every attention rank's
// budget of `max_batched_tokens`.
double PrefillWorkerRequestsPerS(const StepModel& step, int64_t prompt_tokens,
                                 int64_t max_batched_tokens);

// Requests per second `replicas` API servers of `engine` pass, each tokenizing one prompt of
// `prompt_tokens` at a time (sim/front_end.h); infinite where the engine charges no tokenizing.
double FrontEndRequestsPerS(const EngineProfile& engine, int64_t replicas, int64_t prompt_tokens);

// Requests per second one worker decodes holding `estimate`'s batch for `output_tokens` steps.
double DecodeWorkerRequestsPerS(const StepEstimate& estimate, int64_t output_tokens);

// One line saying why a step estimate does not fit in memory, with the numbers and the fix.
std::string DoesNotFitMessage(const ModelSpec& model, const ClusterSpec& cluster,
                              const StepEstimate& estimate, const PerfOptions& options);

// Notes the user should see about how the formats run on `gpu`, e.g. fp8 weights on a GPU
// without fp8 tensor cores run weight-only (stored in fp8, multiplied in bf16). Empty when none.
std::vector<std::string> FormatNotes(const GpuSpec& gpu, const PerfOptions& options);
// Appends to `notes` what it does not hold yet of each of `d`'s pools' FormatNotes, and a note
// for a pool whose layout splits prompts by context parallelism on an engine that serves
// without it (the prediction is what an engine with ring attention would do).
void AddDeploymentNotes(const Deployment& d, std::vector<std::string>& notes);

// The weight formats in words: "bf16", or per module ("experts mxfp4, rest bf16").
std::string WeightFormatName(const PerfOptions& options);

}  // namespace shardwise
