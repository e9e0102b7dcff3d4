// The CUDA backend's attention ops (the kernels are in prepare.cu and attention.cu).
#include "cuda_kernels.h"
#include "shardwise/runtime/cuda/gemm.h"

namespace shardwise::cuda {
Status CudaKernels::PrepareGqa(const Tensor& qkv, const GqaShape& g, const Tensor* q_norm,
                               const Tensor* k_norm, double eps, Tensor& q_out, Tensor& k_cache,
                               Tensor& v_cache, int64_t capacity) {
  return cuda::PrepareGqa(F32(qkv), g.heads, g.kv_heads, g.head_dim, F32(q_norm), F32(k_norm),
                          static_cast<float>(eps), F32(q_out), Bf(k_cache), Bf(v_cache), capacity,
                          step_, st());
}

Status CudaKernels::PrepareMla(Tensor& q, const Tensor& kv, const Tensor& kv_norm, double eps,
                               const MlaShape& s, Tensor& cache, int64_t capacity) {
  return cuda::PrepareMla(F32(q), F32(kv), F32(kv_norm), static_cast<float>(eps), s.heads, s.nope,
                          s.rope, s.kv_lora, Bf(cache), capacity, step_, st());
}

Status CudaKernels::MlaAbsorbQuery(const Tensor& q, const Tensor& kv_b, const MlaShape& s,
                                   Tensor& qa, int64_t rows) {
  return cuda::MlaAbsorbQuery(F32(q), Bf(kv_b), s.heads, s.nope, s.rope, s.kv_lora, s.value_dim,
                              F32(qa), rows, st());
}

Status CudaKernels::MlaLiftOutput(const Tensor& o_latent, const Tensor& kv_b, const MlaShape& s,
                                  Tensor& out, int64_t rows) {
  return cuda::MlaLiftOutput(F32(o_latent), Bf(kv_b), s.heads, s.nope, s.kv_lora, s.value_dim,
                             Bf(out), rows, st());
}

Status CudaKernels::MlaExpand(const Tensor& source, bool by_sequence, int64_t capacity,
                              int64_t sequences, int64_t n, const Tensor& kv_b, const MlaShape& s,
                              Tensor& keys, Tensor& values) {
  const int64_t tokens = sequences * n, width = s.heads * (s.nope + s.value_dim);
  SW_RETURN_IF_ERROR(
      Ensure(latents_, static_cast<size_t>(std::max<int64_t>(1, tokens * s.kv_lora))));
  SW_RETURN_IF_ERROR(Ensure(expanded_, static_cast<size_t>(std::max<int64_t>(1, tokens * width))));
  const int32_t* seqs = by_sequence ? step_.seqs : nullptr;
  SW_RETURN_IF_ERROR(MlaGatherLatents(Bf(source), seqs, capacity, s.kv_lora, s.rope, sequences, n,
                                      latents_.data(), st()));
  SW_RETURN_IF_ERROR(
      cuda::Gemm(blas_, latents_.data(), Bf(kv_b), expanded_.data(), tokens, width, s.kv_lora));
  return MlaSplitExpanded(expanded_.data(), Bf(source), seqs, capacity, s.heads, s.nope, s.rope,
                          s.kv_lora, s.value_dim, sequences, n, Bf(keys), Bf(values), st());
}

StatusOr<AttendArgs> CudaKernels::AttendArguments(const AttentionQueries& q,
                                                  const AttentionKeys& keys) {
  AttendArgs a;
  a.q = F32(*q.q);
  a.rows = q.rows;
  a.heads = q.heads;
  a.dim = q.dim;
  if (!q.kv_head.empty()) {
    // Two head maps cover a model (GQA's; MLA's own heads): each is uploaded once.
    Mirrored<int64_t>& map = std::equal(q.kv_head.begin(), q.kv_head.end(),
                                        kv_heads_[0].host.begin(), kv_heads_[0].host.end()) ||
                                     kv_heads_[0].host.empty()
                                 ? kv_heads_[0]
                                 : kv_heads_[1];
    SW_ASSIGN_OR_RETURN(const bool moved, map.Set(q.kv_head, st()));
    if (moved) graphs_.clear();
    a.kv_head = map.device.data();
  }
  a.keys = Bf(*keys.keys);
  a.values = Bf(*keys.values);
  a.by_sequence = keys.by_sequence;
  a.capacity = keys.capacity;
  a.key_stride = keys.key_stride;
  a.value_stride = keys.value_stride;
  a.value_dim = keys.value_dim;
  if (keys.positions.empty()) {  // the step's cache: its key count is read on the device
    a.key_positions = step_.key_positions;
    a.key_count = step_.key_count;
    a.max_keys = keys.capacity;
  } else {
    const int64_t n = static_cast<int64_t>(keys.positions.size());
    SW_ASSIGN_OR_RETURN(a.key_positions, Staged(call_keys_, keys.positions));
    SW_RETURN_IF_ERROR(call_key_count_.Set(std::span<const int64_t>(&n, 1), st()).status());
    a.key_count = call_key_count_.device.data();
    a.max_keys = n;
  }
  a.window = keys.window;
  a.scale = keys.scale;
  a.step = step_;
  SW_RETURN_IF_ERROR(Ensure(workspace_, std::max<size_t>(1, AttendWorkspaceFloats(a))));
  return a;
}

Status CudaKernels::Attend(const AttentionQueries& q, const AttentionKeys& keys, Tensor& partial,
                           bool fresh) {
  SW_ASSIGN_OR_RETURN(const AttendArgs a, AttendArguments(q, keys));
  return cuda::Attend(a, F32(partial), fresh, workspace_.data(), st());
}

Status CudaKernels::AttendAll(const AttentionQueries& q, const AttentionKeys& keys, Tensor&,
                              const Tensor* sinks, Tensor& out) {
  SW_ASSIGN_OR_RETURN(const AttendArgs a, AttendArguments(q, keys));
  return cuda::AttendAll(a, F32(sinks), Dev(out).data(), Dev(out).elem(), workspace_.data(), st());
}

Status CudaKernels::FinishAttention(const Tensor& partial, const Tensor* sinks, int64_t rows,
                                    int64_t heads, int64_t value_dim, Tensor& out) {
  return cuda::FinishAttention(F32(partial), F32(sinks), rows, heads, value_dim, Dev(out).data(),
                               Dev(out).elem(), st());
}

}  // namespace shardwise::cuda
