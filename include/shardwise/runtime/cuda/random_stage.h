// A whole model (one rank, no sharding) with weights generated on the GPU itself, for
// benchmarks of full-size shapes (llama-3.1-8b: 16 GB of bf16 weights) that the host-side
// weight generator would take minutes to produce. Values ~ U(-1, 1) / sqrt(fan-in), norm
// weights ~ 1, like GeneratedWeights; they are not the same values.
#pragma once

#include <cstdint>
#include <memory>

#include "shardwise/model/model_spec.h"
#include "shardwise/runtime/stage_compute.h"

namespace shardwise::cuda {

StatusOr<std::unique_ptr<StageCompute>> MakeRandomCudaStage(const ModelSpec& model,
                                                            int64_t sequences, int64_t max_tokens,
                                                            uint64_t seed, int device);

}  // namespace shardwise::cuda
