// Kernel launches: how many kernels a pipeline stage's layers launch per step under a serving
// engine (what its model code fuses), and what they cost beyond the ops' rooflines. Every kernel
// holds the GPU's stream for a fixed time besides its work: its launch, the first round trip to
// memory and the drain of its last wave. Inside a CUDA graph that is the GPU's per-kernel latency
// (GpuSpec::kernel_latency_s), the same at every TP degree, so decode at small batches carries a
// per-layer floor that the roofline's max(compute, memory) omits. Outside a graph the host must
// also issue each kernel; it runs ahead of the GPU, so a step takes the longer of the GPU's time
// and the host's. Pure functions.
#pragma once

#include "shardwise/perf/engine.h"
#include "shardwise/perf/shard.h"

namespace shardwise {

// What decides a stage's kernel count besides its layers.
struct LaunchSetup {
  bool fused_allreduce_norm = false;  // TP > 1 and the norm runs inside the all-reduce kernel
  bool fp8_gemms = false;             // GEMMs take fp8 activations
  bool qk_norm = false;               // the model normalises Q and K per head
  bool shared_experts = false;        // MoE layers also run shared experts
};

// Kernels the stage's layers launch in one pass.
double StageKernels(const KernelCounts& counts, const StageLayers& stage, const LaunchSetup& setup);

// Host time of one pass of the stage outside CUDA graphs: each kernel's launch and, where the
// pass carries prompt tokens, each layer's framework work.
double StageEagerHostS(const EngineProfile& engine, const StageLayers& stage,
                       const LaunchSetup& setup, bool carries_prompt);

// Host time a step exposes when the host needs `host_s` to issue it: what it needs beyond
// `gpu_s`, the time the GPU spends on the step.
double ExposedHostS(double host_s, double gpu_s);

}  // namespace shardwise
