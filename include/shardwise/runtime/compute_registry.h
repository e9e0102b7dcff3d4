// The compute backends a rank's forward pass can run on in this build, beside the communicator
// registry (comm/registry.h); both are one table in src/runtime/backend/registry.cc, the only
// runtime file that knows which backends were built. "cpu" always (SIMD kernels, fp32
// activations), "cuda" when built with SHARDWISE_WITH_CUDA (bf16 on a GPU). A backend answers
// per op what it computes (backend/kernels.h's OpNeed), never per model. Thread-safe.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "shardwise/common/status.h"
#include "shardwise/layout/layout.h"
#include "shardwise/model/model_spec.h"
#include "shardwise/runtime/backend/kernels.h"

namespace shardwise {

std::vector<std::string> DeviceComputeNames();

// Whether `device` can run `model` with `layout` and `storage` here: built in, a device present,
// and every op the stage needs supported (op_needs.h). The error names the fix.
Status CheckDeviceCompute(const std::string& device, const ModelSpec& model, const Layout& layout,
                          WeightStorage storage = WeightStorage::kFp32);

// A world rank's kernels on `device`: the CPU with `threads` threads, or GPU number
// world_rank % (visible GPUs), so ranks share GPUs when there are more ranks than GPUs.
StatusOr<std::unique_ptr<Kernels>> MakeKernels(const std::string& device, int world_rank,
                                               int threads);

// How far a run on `device` with `storage` may stray from the unsharded CPU reference in the same
// storage (max |error| over the largest |logit|): 1e-4 where activations stay fp32 (cpu, fp32
// weights: float summation order only); 2e-2 where products' inputs are rounded to bf16 (cuda;
// cpu with bf16 weights: 8 significant bits, unit roundoff 2^-9, rounded once per layer, and a
// value within fp32 noise of a rounding boundary may round either way in two layouts); 4e-2
// where they are quantised to int8 per block of 32 (cpu with int8 weights: half a step is 1/254
// of the block's largest value, twice bf16's).
double ReferenceTolerance(const std::string& device, WeightStorage storage = WeightStorage::kFp32);

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
