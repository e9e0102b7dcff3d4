// Scheduling and routing policies as small value types, shared by the simulator and (later)
// the runtime: what a replica admits each iteration, and how requests pick a replica.
#pragma once

#include <cstdint>
#include <string>
#include <variant>

#include "shardwise/common/status.h"

namespace shardwise {

// How a replica admits a request against its KV cache.
enum class Admission {
  kNoEvict,         // reserve prompt + output KV up front (TensorRT-LLM GUARANTEED_NO_EVICT)
  kMaxUtilization,  // reserve the prompt only; preempt the newest sequence when full (vLLM)
};
StatusOr<Admission> ParseAdmission(const std::string& text);
std::string AdmissionName(Admission admission);

// Iteration-level (continuous) batching with chunked prefill, first come first served.
struct BatchPolicy {
  Admission admission = Admission::kNoEvict;
  int64_t max_batch = 2048;           // sequences running at once
  int64_t max_batched_tokens = 8192;  // tokens per iteration (decode tokens + prefill chunk)
  int64_t block_tokens = 16;          // KV allocation granularity (PagedAttention blocks)
};

struct RoundRobinRouter {};
struct LeastLoadedRouter {};  // fewest requests in flight
using RouterPolicy = std::variant<RoundRobinRouter, LeastLoadedRouter>;

StatusOr<RouterPolicy> ParseRouter(const std::string& text);
std::string RouterName(const RouterPolicy& router);

}  // namespace shardwise
