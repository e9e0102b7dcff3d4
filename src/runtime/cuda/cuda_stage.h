// The CUDA implementation of StageCompute (private to the runtime; reached through
// compute_registry.h): a rank's shard of the model as bf16 weights on one GPU, its forward
// pass as the ops of ops.h, collectives through the rank's communicators on host rows.
#pragma once

#include <memory>

#include "shardwise/runtime/stage_compute.h"

namespace shardwise::cuda {

// An error naming what the CUDA backend does not execute yet for this model, layout and MoE
// options. (Micro-batches need nothing from it: the runner hands it any subset of sequences.)
Status CheckCudaSupport(const ModelSpec& model, const Layout& layout,
                        const MoeRunOptions& moe = {});

// Copies `host`'s weights (converted to bf16) to `device` and allocates its KV caches there.
StatusOr<std::unique_ptr<StageCompute>> MakeCudaStage(const RankModel& host, int device);

}  // namespace shardwise::cuda
