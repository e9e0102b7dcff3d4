// Measures a GPU's bf16 GEMM rate and copy bandwidth (private; reached through
// compute_registry.h's MeasureGpuRates).
#pragma once

#include "shardwise/runtime/compute_registry.h"

namespace shardwise::cuda {

StatusOr<MeasuredGpuRates> MeasureRates(int device);

}  // namespace shardwise::cuda
