// Shared by the GPU benchmarks: the GPU this process sees, matched to the catalog (whose peak
// rates and calibrated fractions the measurements are compared with), and a CUDA event timer.
#pragma once

#include <cstdio>
#include <optional>
#include <string>

#include "shardwise/hw/gpu_match.h"
#include "shardwise/runtime/cuda/device.h"

namespace shardwise::bench {

struct BenchGpu {
  std::string driver_name;
  std::optional<GpuSpec> spec;  // absent: not in the catalog (measurements print without ratios)
};

// The first visible GPU, or nullopt after printing why there is none (then nothing is measured).
inline std::optional<BenchGpu> FindBenchGpu(const char* program) {
  const cuda::GpuInventory inv = cuda::FindGpus();
  if (inv.count == 0) {
    std::printf("%s: no GPU on this machine (%s); nothing measured\n", program,
                inv.why_none.c_str());
    return std::nullopt;
  }
  BenchGpu g;
  g.driver_name = cuda::DeviceName(0).ok() ? *cuda::DeviceName(0) : "unknown GPU";
  const auto gpus = LoadBuiltinGpus();
  if (gpus.ok()) {
    auto spec = MatchDriverGpuName(g.driver_name, *gpus);
    if (spec.ok()) {
      g.spec = *spec;
    } else {
      std::printf("%s\n", spec.status().message().c_str());
    }
  }
  std::printf("GPU: %s (catalog: %s)\n", g.driver_name.c_str(),
              g.spec ? g.spec->name.c_str() : "none");
  return g;
}

// Mean seconds of `iters` calls of f() on `stream`, after `warmup` untimed calls.
template <typename F>
StatusOr<double> TimeOnStream(cudaStream_t stream, int warmup, int iters, F&& f) {
  for (int i = 0; i < warmup; ++i) SW_RETURN_IF_ERROR(f());
  cudaEvent_t start, stop;
  SW_RETURN_IF_ERROR(cuda::CudaStatus(cudaEventCreate(&start), "cudaEventCreate"));
  SW_RETURN_IF_ERROR(cuda::CudaStatus(cudaEventCreate(&stop), "cudaEventCreate"));
  SW_RETURN_IF_ERROR(cuda::CudaStatus(cudaEventRecord(start, stream), "cudaEventRecord"));
  for (int i = 0; i < iters; ++i) SW_RETURN_IF_ERROR(f());
  SW_RETURN_IF_ERROR(cuda::CudaStatus(cudaEventRecord(stop, stream), "cudaEventRecord"));
  SW_RETURN_IF_ERROR(cuda::CudaStatus(cudaEventSynchronize(stop), "cudaEventSynchronize"));
  float ms = 0;
  SW_RETURN_IF_ERROR(
      cuda::CudaStatus(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime"));
  (void)cudaEventDestroy(start);
  (void)cudaEventDestroy(stop);
  return static_cast<double>(ms) * 1e-3 / iters;
}

}  // namespace shardwise::bench
