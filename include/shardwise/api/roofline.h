// Roofline: decode arithmetic intensity against batch on one GPU, the sweet-spot batch, and the
// critical batch sizes and degrees of "How to Think About GPUs" (perf/roofline.h). Pure.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "shardwise/api/catalog.h"
#include "shardwise/common/status.h"
#include "shardwise/perf/roofline.h"

namespace shardwise::api {

struct RooflineRequest {
  std::string model = "llama-3.1-70b";
  std::string gpu = "h100-sxm";
  std::string dtype = "bf16";
  std::string kv_dtype = "bf16";
  int64_t context = 0;  // KV tokens per sequence
  int64_t gpus_per_node = 8;
};

struct RooflineReport {
  ModelSpec model;
  GpuSpec gpu;
  RooflineRequest request;
  Roofline roofline;
};

StatusOr<RooflineReport> RooflineOf(const Catalog& catalog, const RooflineRequest& request);

nlohmann::json ToJson(const RooflineReport& report);

}  // namespace shardwise::api
