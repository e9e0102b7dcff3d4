// Minimum-GPU sizing by the Parallelism guide's method: the memory a deployment needs, rounded up
// to an instance size of 1, 2, 4 or 8 GPUs and beyond that to whole nodes. The weights in the
// checkpoint's own formats (per module) unless one is given; the KV cache of `concurrency`
// sequences of `context_tokens` (by default one request at the model's full context: the least a
// deployment must hold to serve any request the model accepts), or the guide's allowance (the
// weights times 1.8). Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "shardwise/common/status.h"
#include "shardwise/hw/gpu.h"
#include "shardwise/model/model_spec.h"
#include "shardwise/model/weight_format.h"

namespace shardwise {

struct SizingRequest {
  Dtype weight_dtype = Dtype::kBf16;
  std::optional<WeightFormats> weight_formats;  // per module; unset: every module weight_dtype
  Dtype kv_dtype = Dtype::kBf16;
  // Either a KV allowance multiplying the weights (the Parallelism guide uses 1.8 = weights + 80%
  // for KV) ...
  std::optional<double> kv_allowance;
  // ... or an exact KV cache: `concurrency` sequences of `context_tokens` each.
  int64_t context_tokens = 0;
  int64_t concurrency = 0;
  // Fraction of each GPU's memory usable for weights and KV (1.0 reproduces the Parallelism guide).
  double usable_fraction = 1.0;
  int64_t gpus_per_node = 8;
};

struct SizingStep {
  int64_t gpus = 0;
  double capacity_bytes = 0;
  bool fits = false;
};

struct SizingResult {
  int64_t gpus = 0;
  int64_t nodes = 0;
  double weight_bytes = 0;
  double kv_bytes = 0;             // KV cache the deployment must hold
  double required_bytes = 0;       // weights + KV
  double capacity_bytes = 0;       // usable memory of the chosen GPU count
  std::vector<SizingStep> ladder;  // the instance sizes tried, smallest first
};

StatusOr<SizingResult> SizeDeployment(const ModelSpec& model, const GpuSpec& gpu,
                                      const SizingRequest& request);

}  // namespace shardwise
