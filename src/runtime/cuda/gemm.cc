// The projections' GEMMs through cuBLAS: bf16 inputs, fp32 output and accumulation.
#include "shardwise/runtime/cuda/gemm.h"

namespace shardwise::cuda {

Status Gemm(BlasHandles& blas, const bf16* x, const bf16* w, float* y, int64_t m, int64_t n,
            int64_t k, float beta) {
  if (m == 0 || n == 0) return Status();
  // Row-major y[m x n] = x[m x k] w[n x k]^T is, column-major, y^T[n x m] = w^T x^T: w is a
  // column-major [k x n] matrix used transposed, x a column-major [k x m] one.
  const float alpha = 1.0f;
  return CublasStatus(
      cublasGemmEx(blas.blas(), CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(n), static_cast<int>(m),
                   static_cast<int>(k), &alpha, w, CUDA_R_16BF, static_cast<int>(k), x, CUDA_R_16BF,
                   static_cast<int>(k), &beta, y, CUDA_R_32F, static_cast<int>(n),
                   CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
      "cublasGemmEx (bf16, fp32 accumulation)");
}

Status GemmF32(BlasHandles& blas, const float* x, const float* w, float* y, int64_t m, int64_t n,
               int64_t k) {
  if (m == 0 || n == 0) return Status();
  const float alpha = 1.0f, beta = 0.0f;
  return CublasStatus(
      cublasSgemm(blas.blas(), CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(n), static_cast<int>(m),
                  static_cast<int>(k), &alpha, w, static_cast<int>(k), x, static_cast<int>(k),
                  &beta, y, static_cast<int>(n)),
      "cublasSgemm");
}

}  // namespace shardwise::cuda
