#include "shardwise/plan/sizing.h"

#include <fmt/format.h>

#include <cmath>

#include "shardwise/model/accounting.h"

namespace shardwise {
namespace {

constexpr int64_t kMaxGpus = 1'000'000;  // beyond any cluster; the request is wrong

Status ValidateRequest(const SizingRequest& r) {
  if (r.kv_allowance) {
    if (!(*r.kv_allowance >= 1.0 && *r.kv_allowance <= 100.0)) {
      return FieldError("kv_alloc",
                        fmt::format("`kv_alloc` must be between 1 (weights only) and 100, got {:g}",
                                    *r.kv_allowance));
    }
  } else if (r.context_tokens <= 0 || r.concurrency <= 0) {
    return FieldError("kv_alloc",
                      "give either `kv_alloc` X, or both `context` N and `concurrency` C");
  }
  if (!(r.usable_fraction > 0 && r.usable_fraction <= 1)) {
    return FieldError(
        "gpu_memory_utilization",
        fmt::format("`gpu_memory_utilization` must be in (0, 1], got {:g}", r.usable_fraction));
  }
  if (r.gpus_per_node <= 0) return Error("GPUs per node must be positive");
  return Status();
}

}  // namespace

StatusOr<SizingResult> SizeDeployment(const ModelSpec& model, const GpuSpec& gpu,
                                      const SizingRequest& request) {
  SW_RETURN_IF_ERROR(ValidateRequest(request));
  SizingResult result;
  result.weight_bytes = request.weight_formats ? WeightBytes(model, *request.weight_formats)
                                               : WeightBytes(model, request.weight_dtype);
  if (request.kv_allowance) {
    result.required_bytes = result.weight_bytes * *request.kv_allowance;
    result.kv_bytes = result.required_bytes - result.weight_bytes;
  } else {
    result.kv_bytes = SequenceCacheBytes(model, request.context_tokens, request.kv_dtype) *
                      static_cast<double>(request.concurrency);
    result.required_bytes = result.weight_bytes + result.kv_bytes;
  }
  const double per_gpu = gpu.hbm_bytes * request.usable_fraction;
  const int64_t node = request.gpus_per_node;
  const double needed = std::ceil(result.required_bytes / per_gpu - 1e-9);
  if (needed > static_cast<double>(kMaxGpus)) {
    return FieldError("context", fmt::format("{} needs {:.3g} GPUs of {}: reduce `context` or "
                                             "`concurrency`",
                                             model.name, needed, gpu.name));
  }
  // Instance sizes: powers of two up to one node, then whole nodes.
  for (int64_t n = 1;; n = n < node ? std::min(n * 2, node) : n + node) {
    SizingStep step{n, per_gpu * static_cast<double>(n), false};
    step.fits = step.capacity_bytes >= result.required_bytes;
    result.ladder.push_back(step);
    if (step.fits) {
      result.gpus = n;
      result.capacity_bytes = step.capacity_bytes;
      break;
    }
    if (n > static_cast<int64_t>(needed) + node) break;  // cannot happen; guards the loop
  }
  SW_CHECK(result.gpus > 0, "sizing ladder ended without a fit");
  result.nodes = (result.gpus + node - 1) / node;
  return result;
}

}  // namespace shardwise
