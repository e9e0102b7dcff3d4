// How a pool's engine admits, schedules and routes requests, as small value types held in
// std::variant (as TensorRT-LLM holds its capacity schedulers): the simulator visits them, the
// launch-config emitters write them, and a deployment carries them. Each alternative states its
// rule and the engine it stands for. Value types; thread-compatible.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include "shardwise/common/status.h"

namespace shardwise {

// Admission against the KV cache.
struct NoEvictAdmission {
  // Reserves the prompt and every output token up front, so a running sequence never has to
  // leave (TensorRT-LLM CapacitySchedulerPolicy GUARANTEED_NO_EVICT, its default).
  static constexpr bool kReservesOutput = true;
};
struct MaxUtilizationAdmission {
  // Reserves the prompt only and preempts the newest sequence when the cache fills, to recompute
  // it later (vLLM's scheduler; TensorRT-LLM MAX_UTILIZATION).
  static constexpr bool kReservesOutput = false;
};
using AdmissionPolicy = std::variant<NoEvictAdmission, MaxUtilizationAdmission>;

// How an iteration combines waiting prompts and running sequences.
struct ChunkedMixedSchedule {
  // Every running sequence decodes; waiting prompts' chunks fill the rest of the token budget
  // (vLLM V1's unified token budget, TensorRT-LLM with enable_chunked_prefill).
  static constexpr bool kDecodesBesidePrefill = true;
  static constexpr bool kChunksPrompts = true;
};
struct WholePromptMixedSchedule {
  // Running sequences decode; waiting prompts join whole, first come first served, while they
  // fit in what the budget leaves, and the first that does not stops the rest (TensorRT-LLM 1.0
  // without enable_chunked_prefill: microBatchScheduler.cpp breaks on overflow).
  static constexpr bool kDecodesBesidePrefill = true;
  static constexpr bool kChunksPrompts = false;
};
struct PrefillFirstSchedule {
  // An iteration prefills waiting prompts alone, within the whole budget, whenever one can be
  // admitted; running sequences decode only in iterations without prefill (SGLang's default:
  // mixed chunks off, a new prefill batch before the running decode batch).
  static constexpr bool kDecodesBesidePrefill = false;
  static constexpr bool kChunksPrompts = true;
};
using SchedulePolicy =
    std::variant<ChunkedMixedSchedule, WholePromptMixedSchedule, PrefillFirstSchedule>;

// How a request picks a replica of a pool.
struct RoundRobinRouter {};
struct LeastLoadedRouter {};  // fewest requests in flight
using RouterPolicy = std::variant<RoundRobinRouter, LeastLoadedRouter>;

bool ReservesOutput(const AdmissionPolicy& admission);
bool DecodesBesidePrefill(const SchedulePolicy& schedule);
bool ChunksPrompts(const SchedulePolicy& schedule);

// Iteration-level (continuous) batching of one scheduler: its policies and limits.
struct BatchPolicy {
  AdmissionPolicy admission = NoEvictAdmission{};
  SchedulePolicy schedule = ChunkedMixedSchedule{};
  int64_t max_batch = 2048;           // sequences running at once
  int64_t max_batched_tokens = 8192;  // tokens per iteration (decode tokens + prefill)
  int64_t block_tokens = 16;          // KV allocation granularity (PagedAttention blocks)
  // Iteration k + 1 is composed as iteration k starts (an overlap scheduler): a request that
  // reaches the scheduler while k runs joins k + 2 at the earliest.
  bool plans_ahead = false;
};

// "no-evict", "max-utilization".
StatusOr<AdmissionPolicy> ParseAdmission(std::string_view text);
std::string AdmissionName(const AdmissionPolicy& admission);
// "chunked-mixed", "whole-prompt-mixed", "prefill-first".
std::string ScheduleName(const SchedulePolicy& schedule);
// "round-robin", "least-loaded".
StatusOr<RouterPolicy> ParseRouter(std::string_view text);
std::string RouterName(const RouterPolicy& router);

}  // namespace shardwise
