// Options shared by the commands that run the step-time model: formats and memory policy.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "shardwise/common/status.h"
#include "shardwise/perf/options.h"
#include "shardwise/perf/step.h"

namespace shardwise::cli {

struct PerfCliOptions {
  std::string dtype = "bf16";
  std::string kv_dtype;  // empty: the weight format where it can hold KV (fp8), else bf16
  double gpu_memory_utilization = 0.9;
  double expert_imbalance = 0;
  int64_t max_batched_tokens = 8192;
  std::string engine = "trtllm";
  // Set when the user gave the option, which then overrides the engine's default.
  CLI::Option* gpu_memory_utilization_option = nullptr;
  CLI::Option* max_batched_tokens_option = nullptr;

  void AddTo(CLI::App* sub);
  StatusOr<PerfOptions> Build() const;
};

// Notes the user should see about how the formats run on `gpu`, e.g. fp8 weights on a GPU
// without fp8 tensor cores run weight-only (stored in fp8, multiplied in bf16). Empty when none.
std::vector<std::string> FormatNotes(const GpuSpec& gpu, const PerfOptions& options);
// Writes each of FormatNotes() to stderr as "shardwise: note: ...".
void PrintFormatNotes(const GpuSpec& gpu, const PerfOptions& options);

// One line saying why a layout does not fit, with the numbers.
std::string DoesNotFitMessage(const ModelSpec& model, const ClusterSpec& cluster,
                              const StepEstimate& e, const PerfOptions& options);

}  // namespace shardwise::cli
