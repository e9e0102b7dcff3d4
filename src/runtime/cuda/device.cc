#include "shardwise/runtime/cuda/device.h"

#include <fmt/format.h>

namespace shardwise::cuda {
namespace {
// cuBLASLt's recommended workspace on Hopper (cuBLAS documentation, cublasLtMatmul).
constexpr size_t kLtWorkspaceBytes = 32u << 20;
}  // namespace

Status CudaStatus(cudaError_t error, std::string_view what) {
  if (error == cudaSuccess) return Status();
  return RuntimeFailure(
      fmt::format("{}: {}: {}", what, cudaGetErrorName(error), cudaGetErrorString(error)));
}

Status CublasStatus(cublasStatus_t status, std::string_view what) {
  if (status == CUBLAS_STATUS_SUCCESS) return Status();
  return RuntimeFailure(
      fmt::format("{}: {}: {}", what, cublasGetStatusName(status), cublasGetStatusString(status)));
}

GpuInventory FindGpus() {
  GpuInventory inv;
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    inv.why_none = e == cudaErrorInsufficientDriver
                       ? "no NVIDIA driver, or one older than this CUDA runtime"
                       : fmt::format("{} ({})", cudaGetErrorString(e), cudaGetErrorName(e));
    (void)cudaGetLastError();  // clear the sticky error of this thread
    return inv;
  }
  inv.count = count;
  if (count == 0) inv.why_none = "the CUDA driver reports no devices";
  return inv;
}

StatusOr<std::string> DeviceName(int device) {
  cudaDeviceProp prop{};
  SW_RETURN_IF_ERROR(CudaStatus(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties"));
  return std::string(prop.name);
}

Status UseDevice(int device) { return CudaStatus(cudaSetDevice(device), "cudaSetDevice"); }

StatusOr<Stream> Stream::Create() {
  Stream s;
  SW_RETURN_IF_ERROR(
      CudaStatus(cudaStreamCreateWithFlags(&s.stream_, cudaStreamNonBlocking), "cudaStreamCreate"));
  return s;
}

Stream& Stream::operator=(Stream&& o) noexcept {
  if (this != &o) {
    if (stream_ != nullptr) (void)cudaStreamDestroy(stream_);
    stream_ = std::exchange(o.stream_, nullptr);
  }
  return *this;
}

Stream::~Stream() {
  if (stream_ != nullptr) (void)cudaStreamDestroy(stream_);
}

Status Stream::Synchronize() const {
  return CudaStatus(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
}

StatusOr<BlasHandles> BlasHandles::Create(cudaStream_t stream) {
  BlasHandles h;
  SW_RETURN_IF_ERROR(CublasStatus(cublasCreate(&h.blas_), "cublasCreate"));
  SW_RETURN_IF_ERROR(CublasStatus(cublasSetStream(h.blas_, stream), "cublasSetStream"));
  SW_RETURN_IF_ERROR(CublasStatus(cublasLtCreate(&h.lt_), "cublasLtCreate"));
  SW_ASSIGN_OR_RETURN(h.workspace_, DeviceBuffer<std::byte>::Allocate(kLtWorkspaceBytes));
  // cuBLAS shares it (one stream): it then never allocates, which CUDA graph capture forbids.
  SW_RETURN_IF_ERROR(
      CublasStatus(cublasSetWorkspace(h.blas_, h.workspace_.data(), h.workspace_.bytes()),
                   "cublasSetWorkspace"));
  return h;
}

BlasHandles::BlasHandles(BlasHandles&& o) noexcept
    : blas_(std::exchange(o.blas_, nullptr)),
      lt_(std::exchange(o.lt_, nullptr)),
      workspace_(std::move(o.workspace_)) {}

BlasHandles::~BlasHandles() {
  if (lt_ != nullptr) (void)cublasLtDestroy(lt_);
  if (blas_ != nullptr) (void)cublasDestroy(blas_);
}

}  // namespace shardwise::cuda
