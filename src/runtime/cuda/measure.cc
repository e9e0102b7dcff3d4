#include "measure.h"

#include "shardwise/runtime/cuda/gemm.h"

namespace shardwise::cuda {
namespace {

// Seconds per call of f() on `stream`, over `iters` calls after one warm-up call.
template <typename F>
StatusOr<double> Time(cudaStream_t stream, int iters, F&& f) {
  SW_RETURN_IF_ERROR(f());
  cudaEvent_t start = nullptr, stop = nullptr;
  SW_RETURN_IF_ERROR(CudaStatus(cudaEventCreate(&start), "cudaEventCreate"));
  Status s = CudaStatus(cudaEventCreate(&stop), "cudaEventCreate");
  if (s.ok()) s = CudaStatus(cudaEventRecord(start, stream), "cudaEventRecord");
  for (int i = 0; s.ok() && i < iters; ++i) s = f();
  if (s.ok()) s = CudaStatus(cudaEventRecord(stop, stream), "cudaEventRecord");
  if (s.ok()) s = CudaStatus(cudaEventSynchronize(stop), "cudaEventSynchronize");
  float ms = 0;
  if (s.ok()) s = CudaStatus(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
  (void)cudaEventDestroy(start);
  if (stop != nullptr) (void)cudaEventDestroy(stop);
  SW_RETURN_IF_ERROR(s);
  return static_cast<double>(ms) * 1e-3 / iters;
}

}  // namespace

StatusOr<MeasuredGpuRates> MeasureRates(int device) {
  SW_RETURN_IF_ERROR(UseDevice(device));
  MeasuredGpuRates r;
  cudaDeviceProp prop{};
  SW_RETURN_IF_ERROR(CudaStatus(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties"));
  r.memory_bytes = static_cast<double>(prop.totalGlobalMem);
  r.sm_count = prop.multiProcessorCount;
  SW_ASSIGN_OR_RETURN(Stream stream, Stream::Create());
  SW_ASSIGN_OR_RETURN(BlasHandles blas, BlasHandles::Create(stream.get()));
  constexpr int64_t kN = 4096;
  SW_ASSIGN_OR_RETURN(auto a, DeviceBuffer<bf16>::Allocate(kN * kN));
  SW_ASSIGN_OR_RETURN(auto b, DeviceBuffer<bf16>::Allocate(kN * kN));
  SW_ASSIGN_OR_RETURN(auto c, DeviceBuffer<float>::Allocate(kN * kN));
  SW_RETURN_IF_ERROR(FillUniform(a.data(), kN * kN, 1, 1.0f, 0.0f, stream.get()));
  SW_RETURN_IF_ERROR(FillUniform(b.data(), kN * kN, 2, 1.0f, 0.0f, stream.get()));
  SW_ASSIGN_OR_RETURN(const double gemm_s, Time(stream.get(), 10, [&] {
                        return Gemm(blas, a.data(), b.data(), c.data(), kN, kN, kN);
                      }));
  r.bf16_flops_per_s = 2.0 * static_cast<double>(kN * kN * kN) / gemm_s;
  constexpr size_t kBytes = size_t{1} << 30;
  SW_ASSIGN_OR_RETURN(auto src, DeviceBuffer<std::byte>::Allocate(kBytes));
  SW_ASSIGN_OR_RETURN(auto dst, DeviceBuffer<std::byte>::Allocate(kBytes));
  SW_ASSIGN_OR_RETURN(const double copy_s, Time(stream.get(), 10, [&] {
                        return CudaStatus(cudaMemcpyAsync(dst.data(), src.data(), kBytes,
                                                          cudaMemcpyDeviceToDevice, stream.get()),
                                          "cudaMemcpyAsync");
                      }));
  r.copy_bytes_per_s = 2.0 * static_cast<double>(kBytes) / copy_s;
  return r;
}

}  // namespace shardwise::cuda
