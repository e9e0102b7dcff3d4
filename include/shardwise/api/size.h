// Size: the minimum GPUs to serve a model (plan/sizing.h): its weights in the checkpoint's own
// formats, as plan serves them, and by default the KV cache of one request at the model's full
// context; or the KV of a context and concurrency, or the Parallelism guide's allowance. Pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "shardwise/api/catalog.h"
#include "shardwise/common/status.h"
#include "shardwise/plan/sizing.h"

namespace shardwise::api {

struct SizeRequest {
  std::string model = "llama-3.1-70b";
  std::string cluster;   // a catalog cluster: its GPU and GPUs per node (default dgx-h100)
  std::string gpu;       // or a bare GPU, 8 per node
  std::string dtype;     // weights, every module; empty: the checkpoint's own formats
  std::string kv_dtype;  // empty: fp8 with fp8 weights, else bf16
  std::optional<double> kv_alloc;  // the guide's rule: memory = weights x this
  std::optional<int64_t> context;  // with concurrency: an exact KV cache
  std::optional<int64_t> concurrency;
  double gpu_memory_utilization = 0.9;
};

struct SizeReport {
  ModelSpec model;
  GpuSpec gpu;
  SizingRequest request;  // as sized (the default context filled in)
  SizingResult result;
  std::string weight_formats;  // in words: "fp8" or "experts mxfp4, rest bf16"
};

StatusOr<SizeReport> Size(const Catalog& catalog, const SizeRequest& request);

}  // namespace shardwise::api
