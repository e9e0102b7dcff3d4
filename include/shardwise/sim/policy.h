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

// How an iteration combines prompts and running sequences.
enum class PrefillSchedule {
  // Every running sequence decodes; waiting prompts' chunks fill the rest of the token budget
  // (vLLM, TensorRT-LLM in-flight batching).
  kMixed,
  // An iteration prefills the waiting prompts alone, within the whole token budget, whenever one
  // can be admitted; running sequences decode only in iterations without prefill (SGLang's
  // default: mixed chunks off, a new prefill batch before the running decode batch).
  kPrefillFirst,
};

// Iteration-level (continuous) batching with chunked prefill, first come first served.
struct BatchPolicy {
  Admission admission = Admission::kNoEvict;
  PrefillSchedule schedule = PrefillSchedule::kMixed;
  int64_t max_batch = 2048;           // sequences running at once
  int64_t max_batched_tokens = 8192;  // tokens per iteration (decode tokens + prefill chunk)
  int64_t block_tokens = 16;          // KV allocation granularity (PagedAttention blocks)
  // Prompts split into chunks that fill the token budget; false: each prompt runs whole, in an
  // iteration with room for it (TensorRT-LLM without enable_chunked_prefill).
  bool chunked_prefill = true;
};

struct RoundRobinRouter {};
struct LeastLoadedRouter {};  // fewest requests in flight
using RouterPolicy = std::variant<RoundRobinRouter, LeastLoadedRouter>;

StatusOr<RouterPolicy> ParseRouter(const std::string& text);
std::string RouterName(const RouterPolicy& router);

}  // namespace shardwise
