// CUDA and cuBLAS error codes as Status values (C++17, so kernels' .cu files can include it).
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <string_view>

#include "shardwise/common/status.h"

namespace shardwise::cuda {

// OK, or a runtime failure "what: <CUDA error name>: <description>".
Status CudaStatus(cudaError_t error, std::string_view what);
Status CublasStatus(cublasStatus_t status, std::string_view what);

}  // namespace shardwise::cuda
