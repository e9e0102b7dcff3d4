// Benchmark: HBM copy bandwidth (device-to-device cudaMemcpyAsync of 2 GiB, counted as bytes
// read plus bytes written, as STREAM copy counts them) against the catalog GPU's peak HBM
// bandwidth and its calibrated achievable fraction (hbm_fraction, from STREAM copy).
// Run on a GPU: build/bench/gpu_hbm_bench. Without one it says so and measures nothing.
#include <cstdio>

#include "gpu_bench_util.h"

namespace shardwise {
namespace {

Status Run() {
  const auto gpu = bench::FindBenchGpu("gpu_hbm_bench");
  if (!gpu) return Status();
  constexpr size_t kBytes = size_t{2} << 30;
  SW_ASSIGN_OR_RETURN(cuda::Stream stream, cuda::Stream::Create());
  SW_ASSIGN_OR_RETURN(auto a, cuda::DeviceBuffer<std::byte>::Allocate(kBytes));
  SW_ASSIGN_OR_RETURN(auto b, cuda::DeviceBuffer<std::byte>::Allocate(kBytes));
  SW_RETURN_IF_ERROR(
      cuda::CudaStatus(cudaMemsetAsync(a.data(), 1, kBytes, stream.get()), "cudaMemsetAsync"));
  SW_ASSIGN_OR_RETURN(
      const double t, bench::TimeOnStream(stream.get(), 2, 20, [&] {
        return cuda::CudaStatus(
            cudaMemcpyAsync(b.data(), a.data(), kBytes, cudaMemcpyDeviceToDevice, stream.get()),
            "cudaMemcpyAsync");
      }));
  const double rate = 2.0 * static_cast<double>(kBytes) / t;
  std::printf("copy: %.0f GB/s (2 GiB device to device, read + write)\n", rate / 1e9);
  if (gpu->spec) {
    std::printf(
        "catalog %s: peak %.0f GB/s -> measured %.1f%% of peak; calibrated achievable %.0f GB/s "
        "(hbm_fraction %.3f) -> measured / calibrated %.3f\n",
        gpu->spec->name.c_str(), gpu->spec->hbm_bytes_per_s / 1e9,
        100 * rate / gpu->spec->hbm_bytes_per_s, gpu->spec->AchievableHbmBytesPerS() / 1e9,
        gpu->spec->hbm_fraction, rate / gpu->spec->AchievableHbmBytesPerS());
  }
  return Status();
}

}  // namespace
}  // namespace shardwise

int main() {
  const shardwise::Status s = shardwise::Run();
  if (!s.ok()) std::fprintf(stderr, "gpu_hbm_bench: %s\n", s.message().c_str());
  return s.ok() ? 0 : 1;
}
