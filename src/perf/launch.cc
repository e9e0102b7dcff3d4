#include "shardwise/perf/launch.h"

#include <algorithm>

namespace shardwise {
namespace {

// GEMMs of each block whose input an fp8 engine quantises: QKV and output projection; gate/up
// and down.
constexpr double kAttentionGemms = 2;
constexpr double kFfnGemms = 2;
// Shared experts run as a dense FFN beside the routed ones: gate/up GEMM, activation, down GEMM.
constexpr double kSharedExpertKernels = 3;

}  // namespace

double StageKernels(const KernelCounts& counts, const StageLayers& stage,
                    const LaunchSetup& setup) {
  // A norm fused into the all-reduce before it is no kernel of its own.
  const double fused_norm = setup.fused_allreduce_norm ? 1.0 : 0.0;
  const double quantise = setup.fp8_gemms ? counts.per_fp8_gemm : 0.0;
  double mixer_blocks = 0;  // attention, linear-attention and SSM blocks alike
  for (MixerKind kind : stage.mixers) mixer_blocks += kind == MixerKind::kNone ? 0.0 : 1.0;
  const double mixer = counts.attention - fused_norm + (setup.qk_norm ? counts.qk_norm : 0.0) +
                       kAttentionGemms * quantise;
  const double dense = counts.dense_ffn - fused_norm + kFfnGemms * quantise;
  const double moe = counts.moe_ffn - fused_norm + kFfnGemms * quantise +
                     (setup.shared_experts ? kSharedExpertKernels + kFfnGemms * quantise : 0.0);
  return std::max(0.0, mixer_blocks * mixer) +
         std::max(0.0, static_cast<double>(stage.dense) * dense) +
         std::max(0.0, static_cast<double>(stage.moe) * moe);
}

double StageEagerHostS(const EngineProfile& engine, const StageLayers& stage,
                       const LaunchSetup& setup, bool carries_prompt) {
  const double layers = carries_prompt ? static_cast<double>(stage.mixers.size()) : 0.0;
  return StageKernels(engine.kernels, stage, setup) * engine.host_launch_s_per_kernel +
         layers * engine.eager_host_s_per_layer;
}

double ExposedHostS(double host_s, double gpu_s) { return std::max(0.0, host_s - gpu_s); }

}  // namespace shardwise
