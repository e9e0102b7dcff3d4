// The fp8 GEMM through cuBLASLt (see fp8.h).
#include <fmt/format.h>

#include "shardwise/runtime/cuda/gemm.h"

namespace shardwise::cuda {
namespace {

// Owns the cuBLASLt descriptors of one call.
struct LtDescriptors {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  ~LtDescriptors() {
    if (pref != nullptr) (void)cublasLtMatmulPreferenceDestroy(pref);
    if (c != nullptr) (void)cublasLtMatrixLayoutDestroy(c);
    if (b != nullptr) (void)cublasLtMatrixLayoutDestroy(b);
    if (a != nullptr) (void)cublasLtMatrixLayoutDestroy(a);
    if (op != nullptr) (void)cublasLtMatmulDescDestroy(op);
  }
};

// GemmFp8 into an output of `out_type` (fp32 or bf16).
Status GemmFp8Into(BlasHandles& blas, const fp8* x, const float* x_scale, const fp8* w,
                   const float* w_scale, void* y, cudaDataType_t out_type, int64_t m, int64_t n,
                   int64_t k) {
  if (m == 0 || n == 0) return Status();
  if (k % 16 != 0)
    return Error(fmt::format("fp8 GEMM: k ({}) must be a multiple of 16 for cuBLASLt", k));
  // As in Gemm: column-major y^T[n x m] = w^T x^T, i.e. A = w ([k x n], transposed) and
  // B = x ([k x m]): the "TN" layout cuBLASLt requires for fp8.
  LtDescriptors d;
  SW_RETURN_IF_ERROR(CublasStatus(cublasLtMatmulDescCreate(&d.op, CUBLAS_COMPUTE_32F, CUDA_R_32F),
                                  "cublasLtMatmulDescCreate"));
  const cublasOperation_t transpose = CUBLAS_OP_T, keep = CUBLAS_OP_N;
  SW_RETURN_IF_ERROR(CublasStatus(cublasLtMatmulDescSetAttribute(d.op, CUBLASLT_MATMUL_DESC_TRANSA,
                                                                 &transpose, sizeof(transpose)),
                                  "TRANSA"));
  SW_RETURN_IF_ERROR(CublasStatus(
      cublasLtMatmulDescSetAttribute(d.op, CUBLASLT_MATMUL_DESC_TRANSB, &keep, sizeof(keep)),
      "TRANSB"));
  SW_RETURN_IF_ERROR(
      CublasStatus(cublasLtMatmulDescSetAttribute(d.op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER,
                                                  &w_scale, sizeof(w_scale)),
                   "A_SCALE_POINTER"));
  SW_RETURN_IF_ERROR(
      CublasStatus(cublasLtMatmulDescSetAttribute(d.op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER,
                                                  &x_scale, sizeof(x_scale)),
                   "B_SCALE_POINTER"));
  SW_RETURN_IF_ERROR(
      CublasStatus(cublasLtMatrixLayoutCreate(&d.a, CUDA_R_8F_E4M3, static_cast<uint64_t>(k),
                                              static_cast<uint64_t>(n), k),
                   "cublasLtMatrixLayoutCreate"));
  SW_RETURN_IF_ERROR(
      CublasStatus(cublasLtMatrixLayoutCreate(&d.b, CUDA_R_8F_E4M3, static_cast<uint64_t>(k),
                                              static_cast<uint64_t>(m), k),
                   "cublasLtMatrixLayoutCreate"));
  SW_RETURN_IF_ERROR(
      CublasStatus(cublasLtMatrixLayoutCreate(&d.c, out_type, static_cast<uint64_t>(n),
                                              static_cast<uint64_t>(m), n),
                   "cublasLtMatrixLayoutCreate"));
  SW_RETURN_IF_ERROR(
      CublasStatus(cublasLtMatmulPreferenceCreate(&d.pref), "cublasLtMatmulPreferenceCreate"));
  const size_t workspace = blas.workspace_bytes();
  SW_RETURN_IF_ERROR(CublasStatus(
      cublasLtMatmulPreferenceSetAttribute(d.pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                           &workspace, sizeof(workspace)),
      "MAX_WORKSPACE_BYTES"));
  cublasLtMatmulHeuristicResult_t heuristic{};
  int found = 0;
  SW_RETURN_IF_ERROR(
      CublasStatus(cublasLtMatmulAlgoGetHeuristic(blas.lt(), d.op, d.a, d.b, d.c, d.c, d.pref, 1,
                                                  &heuristic, &found),
                   "cublasLtMatmulAlgoGetHeuristic"));
  if (found == 0) {
    return Error(
        "cuBLASLt has no fp8 GEMM for this GPU and shape (fp8 needs compute capability 8.9 or "
        "later)");
  }
  cudaStream_t stream = nullptr;
  SW_RETURN_IF_ERROR(CublasStatus(cublasGetStream(blas.blas(), &stream), "cublasGetStream"));
  const float alpha = 1.0f, beta = 0.0f;
  return CublasStatus(cublasLtMatmul(blas.lt(), d.op, &alpha, w, d.a, x, d.b, &beta, y, d.c, y, d.c,
                                     &heuristic.algo, blas.workspace(), workspace, stream),
                      "cublasLtMatmul (fp8)");
}

}  // namespace

Status GemmFp8(BlasHandles& blas, const fp8* x, const float* x_scale, const fp8* w,
               const float* w_scale, float* y, int64_t m, int64_t n, int64_t k) {
  return GemmFp8Into(blas, x, x_scale, w, w_scale, y, CUDA_R_32F, m, n, k);
}

Status GemmFp8Bf16Out(BlasHandles& blas, const fp8* x, const float* x_scale, const fp8* w,
                      const float* w_scale, bf16* y, int64_t m, int64_t n, int64_t k) {
  return GemmFp8Into(blas, x, x_scale, w, w_scale, y, CUDA_R_16BF, m, n, k);
}

}  // namespace shardwise::cuda
