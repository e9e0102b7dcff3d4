// The one place that knows which compute devices a rank's forward pass can run on in this
// build, beside the communicator registry (comm/registry.h): "cpu" always (fp32 RankModel),
// "cuda" when built with SHARDWISE_WITH_CUDA (bf16 on a GPU). Thread-safe.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "shardwise/common/status.h"
#include "shardwise/layout/layout.h"
#include "shardwise/model/model_spec.h"
#include "shardwise/runtime/stage_compute.h"

namespace shardwise {

std::vector<std::string> DeviceComputeNames();

// Whether `device` can run `model` with `layout` and `moe` here: built in, a GPU present, the
// features implemented. The error names the fix.
Status CheckDeviceCompute(const std::string& device, const ModelSpec& model, const Layout& layout,
                          const MoeRunOptions& moe = {});

// A world rank's compute on `device`: the CPU RankModel itself, or its shard copied to GPU
// number world_rank % (visible GPUs), so ranks share GPUs when there are more ranks than GPUs.
StatusOr<std::unique_ptr<StageCompute>> MakeStageCompute(const std::string& device, RankModel model,
                                                         int world_rank);

// How far a run on `device` may stray from the fp32 CPU reference (max |error| over the
// largest |logit|): 1e-4 on cpu (float summation order), 2e-2 on cuda (bf16 weights and GEMM
// inputs: 8 significant bits, unit roundoff 2^-9, rounded once per layer).
double ReferenceTolerance(const std::string& device);

// The driver's names of the visible GPUs (empty without CUDA or without a GPU).
std::vector<std::string> VisibleGpuNames();

// Rates measured on the first visible GPU, for a GPU the catalog does not know: a bf16 GEMM
// (4096^3 through cuBLAS, fp32 accumulation) and a 1 GiB device-to-device copy (bytes read plus
// written). About a second. An error without CUDA or a GPU.
struct MeasuredGpuRates {
  double bf16_flops_per_s = 0;
  double copy_bytes_per_s = 0;
  double memory_bytes = 0;
  int64_t sm_count = 0;
};
StatusOr<MeasuredGpuRates> MeasureGpuRates();

}  // namespace shardwise
