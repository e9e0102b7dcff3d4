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
  // Instance sizes: powers of two up to one node, then whole nodes; the answer is the smallest
  // that fits. The ladder shows 1, 2, 4 ... one node, then nodes doubling, the whole-node size
  // below the answer, and the answer (every whole-node size would be a line per node).
  const auto fits = [&](int64_t n) {
    return per_gpu * static_cast<double>(n) >= result.required_bytes;
  };
  const auto add = [&](int64_t n) {
    if (result.ladder.empty() || n > result.ladder.back().gpus) {
      result.ladder.push_back({n, per_gpu * static_cast<double>(n), fits(n)});
    }
  };
  for (int64_t n = 1; n <= node && result.gpus == 0; n = n < node ? std::min(n * 2, node) : 2 * n) {
    add(n);
    if (fits(n)) result.gpus = n;
  }
  if (result.gpus == 0) {
    int64_t nodes =
        std::max<int64_t>(2, static_cast<int64_t>(std::ceil(needed / static_cast<double>(node))));
    while (!fits(nodes * node)) ++nodes;
    result.gpus = nodes * node;
    for (int64_t m = 2 * node; m < result.gpus - node; m *= 2) add(m);
    add(result.gpus - node);
    add(result.gpus);
  }
  result.capacity_bytes = per_gpu * static_cast<double>(result.gpus);
  result.nodes = (result.gpus + node - 1) / node;
  return result;
}

}  // namespace shardwise
