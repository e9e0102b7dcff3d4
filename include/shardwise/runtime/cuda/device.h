// Device resources of the CUDA backend as move-only RAII types: memory buffers, streams and
// the cuBLAS/cuBLASLt handles. Every CUDA error becomes a runtime Status naming the call and
// the driver's message; nothing here prints or exits. Only code built with SHARDWISE_WITH_CUDA
// includes this header. A buffer or stream belongs to the device that was current when it was
// made; instances are thread-compatible (one rank, one thread).
#pragma once

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "shardwise/common/status.h"
#include "shardwise/runtime/cuda/cuda_status.h"

namespace shardwise::cuda {

// The GPUs this process sees. count is 0 (and `why_none` says why, e.g. no driver) on a machine
// without one; that is not an error.
struct GpuInventory {
  int count = 0;
  std::string why_none;
};
GpuInventory FindGpus();
// The driver's name of a device, e.g. "NVIDIA H100 80GB HBM3".
StatusOr<std::string> DeviceName(int device);
// Makes `device` current for this thread.
Status UseDevice(int device);

// A device allocation of n elements of T.
template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  static StatusOr<DeviceBuffer> Allocate(size_t n) {
    DeviceBuffer b;
    if (n == 0) return b;
    void* p = nullptr;
    SW_RETURN_IF_ERROR(CudaStatus(cudaMalloc(&p, n * sizeof(T)), "cudaMalloc"));
    b.data_ = static_cast<T*>(p);
    b.size_ = n;
    return b;
  }
  DeviceBuffer(DeviceBuffer&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      Release();
      data_ = std::exchange(o.data_, nullptr);
      size_ = std::exchange(o.size_, 0);
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { Release(); }

  T* data() { return data_; }
  const T* data() const { return data_; }
  size_t size() const { return size_; }
  size_t bytes() const { return size_ * sizeof(T); }

  // Asynchronous copies on `stream` of the first host.size() elements.
  Status CopyFromHost(std::span<const T> host, cudaStream_t stream) {
    SW_CHECK(host.size() <= size_, "DeviceBuffer::CopyFromHost: host data larger than the buffer");
    return CudaStatus(
        cudaMemcpyAsync(data_, host.data(), host.size_bytes(), cudaMemcpyHostToDevice, stream),
        "cudaMemcpyAsync (host to device)");
  }
  Status CopyToHost(std::span<T> host, cudaStream_t stream) const {
    SW_CHECK(host.size() <= size_, "DeviceBuffer::CopyToHost: host span larger than the buffer");
    return CudaStatus(
        cudaMemcpyAsync(host.data(), data_, host.size_bytes(), cudaMemcpyDeviceToHost, stream),
        "cudaMemcpyAsync (device to host)");
  }

 private:
  void Release() {
    if (data_ != nullptr) (void)cudaFree(data_);
    data_ = nullptr;
    size_ = 0;
  }
  T* data_ = nullptr;
  size_t size_ = 0;
};

// A non-blocking CUDA stream.
class Stream {
 public:
  static StatusOr<Stream> Create();
  Stream(Stream&& o) noexcept : stream_(std::exchange(o.stream_, nullptr)) {}
  Stream& operator=(Stream&& o) noexcept;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream();
  cudaStream_t get() const { return stream_; }
  Status Synchronize() const;

 private:
  Stream() = default;
  cudaStream_t stream_ = nullptr;
};

// cuBLAS and cuBLASLt handles bound to one stream, with cuBLASLt's workspace.
class BlasHandles {
 public:
  static StatusOr<BlasHandles> Create(cudaStream_t stream);
  BlasHandles(BlasHandles&& o) noexcept;
  BlasHandles& operator=(BlasHandles&&) = delete;
  BlasHandles(const BlasHandles&) = delete;
  BlasHandles& operator=(const BlasHandles&) = delete;
  ~BlasHandles();
  cublasHandle_t blas() const { return blas_; }
  cublasLtHandle_t lt() const { return lt_; }
  void* workspace() { return workspace_.data(); }
  size_t workspace_bytes() const { return workspace_.bytes(); }

 private:
  BlasHandles() = default;
  cublasHandle_t blas_ = nullptr;
  cublasLtHandle_t lt_ = nullptr;
  DeviceBuffer<std::byte> workspace_;
};

}  // namespace shardwise::cuda
