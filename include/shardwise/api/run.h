// Run: execute a sharded forward pass for real (prefill, then greedy decode with a KV cache)
// across ranks, check it against the unsharded reference, and predict its phases with the step
// model for this machine (its measured CPU profile, or the GPU the ranks compute on). The
// runtime (runtime/runner.h) does the work; this puts the run, the check and the prediction into
// one result. Reads the environment, /proc and the host profile cache (api/run_guards.h).
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "shardwise/common/status.h"
#include "shardwise/runtime/reference_check.h"
#include "shardwise/runtime/runner.h"

namespace shardwise::api {

struct RunRequest {
  std::string model = "tiny-dense";
  std::string layout = "tp2";
  std::string backend = "threads";  // threads, mpi, cuda or nccl (runtime/comm/registry.h)
  std::string device_compute;       // empty: cuda for the cuda and nccl backends, else cpu
  int64_t prompt_len = 16;
  int64_t gen = 8;
  int64_t batch = 2;
  uint64_t seed = 1;
  std::string weights;       // a directory of config-matching safetensors; empty: generated
  std::string plan;          // a saved `plan --json`: run its model with its best layout
  std::string host_profile;  // empty: the cached one, measured once
  double timeout_s = 60;
  int64_t redundant_experts = 0;
  int64_t micro_batches = 0;
  std::optional<double> capacity_factor;
  int64_t layers = 0;  // 0: all of the model's layers
  std::string dtype = "fp32";
  int threads = 1;
  bool no_check = false;  // skip the unsharded reference run
  // Progress on world rank 0 after each generated token (runtime/runner.h).
  std::function<void(int64_t step, int64_t steps)> on_step;
};

// The step model's phase times for the run's batch and lengths.
struct RunPrediction {
  double prefill_s = 0;  // 0: no prediction (see RunReport::predicted_for)
  double decode_s = 0;
};

struct RunReport {
  bool reporting = false;  // false on MPI ranks other than 0: rank 0 holds the result
  RunConfig config;
  std::string backend;
  RunResult result;
  std::optional<ReferenceComparison> check;  // absent with no_check
  double tolerance = 0;                      // the check's relative logit tolerance
  RunPrediction predicted;
  std::string predicted_for;  // which machine the prediction is for, in words
  // The schedule model's pipeline bubble for equal stages (perf/schedule.h).
  double model_prefill_bubble = 0, model_decode_bubble = 0;
  double decode_tokens_per_s = 0;  // measured, rank 0
  std::vector<std::string> notes;  // for the user: an oversubscribed machine

  bool Matches() const { return !check || check->Matches(tolerance); }
};

StatusOr<RunReport> Run(const RunRequest& request);

nlohmann::json ToJson(const RunReport& report);

}  // namespace shardwise::api
