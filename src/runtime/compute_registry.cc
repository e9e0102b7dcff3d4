// The only runtime file besides comm/registry.cc with #ifdef SHARDWISE_WITH_CUDA (STYLE.md:
// one registry knows the backends).
#include "shardwise/runtime/compute_registry.h"

#include <fmt/format.h>

#include "shardwise/common/suggest.h"

#ifdef SHARDWISE_WITH_CUDA
#include "cuda/cuda_stage.h"
#include "cuda/measure.h"
#include "shardwise/runtime/cuda/device.h"
#endif

namespace shardwise {

std::vector<std::string> DeviceComputeNames() {
  std::vector<std::string> names = {"cpu"};
#ifdef SHARDWISE_WITH_CUDA
  names.push_back("cuda");
#endif
  return names;
}

Status CheckDeviceCompute(const std::string& device, const ModelSpec& model, const Layout& layout,
                          const MoeRunOptions& moe) {
  if (device == "cpu") return Status();
#ifdef SHARDWISE_WITH_CUDA
  if (device == "cuda") {
    const cuda::GpuInventory gpus = cuda::FindGpus();
    if (gpus.count == 0) {
      return Error(
          fmt::format("computing on CUDA needs a GPU and this machine has none ({}); use "
                      "--backend threads --device-compute cpu",
                      gpus.why_none));
    }
    return cuda::CheckCudaSupport(model, layout, moe);
  }
#else
  (void)model;
  (void)layout;
  (void)moe;
  if (device == "cuda") {
    return Error(
        "this build has no CUDA backend (install the CUDA toolkit and NCCL, rebuild with "
        "-DSHARDWISE_WITH_CUDA=ON); use --backend threads --device-compute cpu");
  }
#endif
  return Error(
      UnknownNameMessage("--device-compute", device, DeviceComputeNames(), "use cpu or cuda"));
}

StatusOr<std::unique_ptr<StageCompute>> MakeStageCompute(const std::string& device, RankModel model,
                                                         int world_rank) {
#ifdef SHARDWISE_WITH_CUDA
  if (device == "cuda") {
    const cuda::GpuInventory gpus = cuda::FindGpus();
    if (gpus.count == 0) return Error("--device-compute cuda: no GPU (" + gpus.why_none + ")");
    return cuda::MakeCudaStage(model, world_rank % gpus.count);
  }
#else
  (void)world_rank;
#endif
  if (device != "cpu")
    return Error(UnknownNameMessage("--device-compute", device, DeviceComputeNames(), "use cpu"));
  return CpuStage(std::move(model));
}

double ReferenceTolerance(const std::string& device) { return device == "cuda" ? 2e-2 : 1e-4; }

std::vector<std::string> VisibleGpuNames() {
  std::vector<std::string> names;
#ifdef SHARDWISE_WITH_CUDA
  const cuda::GpuInventory gpus = cuda::FindGpus();
  for (int i = 0; i < gpus.count; ++i) {
    auto name = cuda::DeviceName(i);
    names.push_back(name.ok() ? *name : std::string("unknown GPU"));
  }
#endif
  return names;
}

StatusOr<MeasuredGpuRates> MeasureGpuRates() {
#ifdef SHARDWISE_WITH_CUDA
  return cuda::MeasureRates(0);
#else
  return Error("this build has no CUDA backend");
#endif
}

}  // namespace shardwise
