// Options shared by the commands that run the step-time model: formats and memory policy.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "shardwise/common/status.h"
#include "shardwise/perf/options.h"
#include "shardwise/perf/step.h"

namespace shardwise::cli {

struct PerfCliOptions {
  std::string dtype;     // empty: the checkpoint's own per-module formats
  std::string kv_dtype;  // empty: the weight format where it can hold KV (fp8), else bf16
  double gpu_memory_utilization = 0.9;
  double expert_imbalance = 0;
  int64_t max_batched_tokens = 8192;

  void AddTo(CLI::App* sub);
  // The options for `model`: its checkpoint's weight formats unless --dtype names one.
  StatusOr<PerfOptions> Build(const ModelSpec& model) const;
};

// The weight formats in words: "bf16", or per module ("experts mxfp4, rest bf16").
std::string WeightFormatName(const PerfOptions& options);

// One line saying why a layout does not fit, with the numbers.
std::string DoesNotFitMessage(const ModelSpec& model, const ClusterSpec& cluster,
                              const StepEstimate& e, const PerfOptions& options);

}  // namespace shardwise::cli
