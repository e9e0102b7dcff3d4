// The composite ops' default implementations: a backend without a fused kernel runs the parts.
#include "shardwise/runtime/backend/kernels.h"

namespace shardwise {

Status Kernels::AddRmsNorm(Tensor& x, const Tensor& y, const Tensor& w, Tensor& out, int64_t rows,
                           double eps) {
  SW_RETURN_IF_ERROR(Add(x, y, rows * w.size()));
  return RmsNorm(x, w, out, rows, eps);
}

Status Kernels::AttendAll(const AttentionQueries& q, const AttentionKeys& keys, Tensor& partial,
                          const Tensor* sinks, Tensor& out) {
  SW_RETURN_IF_ERROR(Attend(q, keys, partial, /*fresh=*/true));
  return FinishAttention(partial, sinks, q.rows, q.heads, keys.value_dim, out);
}

StatusOr<bool> Kernels::BeginGraph(int64_t) { return true; }

Status Kernels::EndGraph() { return Status(); }

}  // namespace shardwise
