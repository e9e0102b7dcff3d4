// Filling a rank's Shard: from a loaded RankModel (its shard converted to bf16), or with
// values generated on the device for benchmarks of full-size shapes.
#include <cmath>

#include "cuda_stage.h"
#include "shard.h"
#include "shardwise/runtime/cuda/random_stage.h"

namespace shardwise::cuda {

namespace {

StatusOr<DeviceBuffer<bf16>> UploadBf16(const std::vector<float>& host, cudaStream_t s) {
  std::vector<bf16> converted(host.size());
  for (size_t i = 0; i < host.size(); ++i) converted[i] = __float2bfloat16(host[i]);
  SW_ASSIGN_OR_RETURN(auto buf, DeviceBuffer<bf16>::Allocate(host.size()));
  SW_RETURN_IF_ERROR(buf.CopyFromHost(std::span<const bf16>(converted), s));
  SW_RETURN_IF_ERROR(
      CudaStatus(cudaStreamSynchronize(s), "cudaStreamSynchronize"));  // `converted` dies here
  return buf;
}

// A CPU weight matrix (fp32, or bf16 whose widening to fp32 and back is exact).
StatusOr<DeviceBuffer<bf16>> UploadBf16(const WeightMatrix& host, cudaStream_t s) {
  return UploadBf16(host.ToFloat(), s);
}

template <typename T>
StatusOr<DeviceBuffer<T>> Upload(const std::vector<T>& host, cudaStream_t s) {
  SW_ASSIGN_OR_RETURN(auto buf, DeviceBuffer<T>::Allocate(host.size()));
  SW_RETURN_IF_ERROR(buf.CopyFromHost(std::span<const T>(host), s));
  SW_RETURN_IF_ERROR(CudaStatus(cudaStreamSynchronize(s), "cudaStreamSynchronize"));
  return buf;
}

}  // namespace

// Reads a loaded RankModel's private shard (a friend of RankModel) onto the current device.
class HostWeights {
 public:
  static StatusOr<Shard> Copy(const RankModel& m, cudaStream_t s) {
    SW_RETURN_IF_ERROR(CheckCudaSupport(m.model_, m.layout_, m.moe_options_));
    Shard d;
    d.model = m.model_;
    d.layout = m.layout_;
    d.place = m.place_;
    d.first = m.first_stage();
    d.last = m.last_stage();
    d.head_begin = m.head_begin_;
    d.heads = m.heads_;
    d.kv_begin = m.kv_begin_;
    d.kv_heads = m.kv_heads_;
    // Without replicas (CheckCudaSupport) EP ranks hold consecutive experts.
    d.expert_begin = m.ep_index_ * m.placement_.slots_per_rank;
    d.max_tokens = m.cache_tokens_;  // without CP, every position of every sequence
    const int64_t per_sequence = m.cache_tokens_ * m.kv_heads_ * m.model_.head_dim;
    d.sequences =
        m.layers_.empty() ? 0 : static_cast<int64_t>(m.layers_[0].k_cache.size()) / per_sequence;
    auto mlp = [&](const RankModel::Mlp& h) -> StatusOr<DeviceMlp> {
      DeviceMlp out;
      out.inter = h.inter;
      SW_ASSIGN_OR_RETURN(out.gate, UploadBf16(h.gate, s));
      SW_ASSIGN_OR_RETURN(out.up, UploadBf16(h.up, s));
      SW_ASSIGN_OR_RETURN(out.down, UploadBf16(h.down, s));
      return out;
    };
    for (const RankModel::Layer& h : m.layers_) {
      DeviceLayer L;
      SW_ASSIGN_OR_RETURN(L.input_norm, UploadBf16(h.input_norm, s));
      SW_ASSIGN_OR_RETURN(L.post_norm, UploadBf16(h.post_norm, s));
      SW_ASSIGN_OR_RETURN(L.q, UploadBf16(h.q, s));
      SW_ASSIGN_OR_RETURN(L.k, UploadBf16(h.k, s));
      SW_ASSIGN_OR_RETURN(L.v, UploadBf16(h.v, s));
      SW_ASSIGN_OR_RETURN(L.o, UploadBf16(h.o, s));
      SW_ASSIGN_OR_RETURN(L.q_bias, UploadBf16(h.q_bias, s));
      SW_ASSIGN_OR_RETURN(L.k_bias, UploadBf16(h.k_bias, s));
      SW_ASSIGN_OR_RETURN(L.v_bias, UploadBf16(h.v_bias, s));
      SW_ASSIGN_OR_RETURN(L.o_bias, UploadBf16(h.o_bias, s));
      SW_ASSIGN_OR_RETURN(L.q_norm, UploadBf16(h.q_norm, s));
      SW_ASSIGN_OR_RETURN(L.k_norm, UploadBf16(h.k_norm, s));
      if (h.mlp) {
        SW_ASSIGN_OR_RETURN(L.mlp, mlp(*h.mlp));
      }
      SW_ASSIGN_OR_RETURN(L.router, Upload(h.router, s));
      L.score_bias = h.score_bias;
      for (const RankModel::Mlp& e : h.experts) {
        SW_ASSIGN_OR_RETURN(DeviceMlp de, mlp(e));
        L.experts.push_back(std::move(de));
      }
      if (h.shared) {
        SW_ASSIGN_OR_RETURN(L.shared, mlp(*h.shared));
      }
      SW_ASSIGN_OR_RETURN(L.shared_gate, UploadBf16(h.shared_gate, s));
      SW_ASSIGN_OR_RETURN(L.k_cache, DeviceBuffer<bf16>::Allocate(h.k_cache.size()));
      SW_ASSIGN_OR_RETURN(L.v_cache, DeviceBuffer<bf16>::Allocate(h.v_cache.size()));
      d.layers.push_back(std::move(L));
    }
    SW_ASSIGN_OR_RETURN(d.embed, UploadBf16(m.embed_, s));
    SW_ASSIGN_OR_RETURN(d.final_norm, UploadBf16(m.final_norm_, s));
    SW_ASSIGN_OR_RETURN(d.lm_head, UploadBf16(m.lm_head_, s));
    d.lm_head_rows = m.lm_head_rows_;
    return d;
  }
};

StatusOr<std::unique_ptr<StageCompute>> MakeCudaStage(const RankModel& host, int device) {
  SW_RETURN_IF_ERROR(UseDevice(device));
  SW_ASSIGN_OR_RETURN(Stream stream, Stream::Create());
  SW_ASSIGN_OR_RETURN(BlasHandles blas, BlasHandles::Create(stream.get()));
  SW_ASSIGN_OR_RETURN(Shard shard, HostWeights::Copy(host, stream.get()));
  SW_RETURN_IF_ERROR(CheckCudaSupport(shard.model, shard.layout));
  return StageFromShard(std::move(shard), std::move(stream), std::move(blas), device);
}

namespace {

// A device tensor of n values offset + scale * U(-1, 1); `stream` runs the fill.
StatusOr<DeviceBuffer<bf16>> Random(int64_t n, uint64_t seed, float scale, float offset,
                                    cudaStream_t s) {
  SW_ASSIGN_OR_RETURN(auto b, DeviceBuffer<bf16>::Allocate(static_cast<size_t>(n)));
  SW_RETURN_IF_ERROR(FillUniform(b.data(), n, seed, scale, offset, s));
  return b;
}

}  // namespace

StatusOr<std::unique_ptr<StageCompute>> MakeRandomCudaStage(const ModelSpec& m, int64_t sequences,
                                                            int64_t max_tokens, uint64_t seed,
                                                            int device) {
  SW_RETURN_IF_ERROR(CheckCudaSupport(m, Layout{}));
  if (m.qkv_bias || m.o_bias || m.qk_norm != QkNorm::kNone || m.moe.num_shared_experts > 0) {
    return Error(m.name + ": generated device weights cover plain Llama and MoE layers only");
  }
  SW_RETURN_IF_ERROR(UseDevice(device));
  SW_ASSIGN_OR_RETURN(Stream stream, Stream::Create());
  SW_ASSIGN_OR_RETURN(BlasHandles blas, BlasHandles::Create(stream.get()));
  const cudaStream_t st = stream.get();
  Shard d;
  d.model = m;
  d.first = d.last = true;
  d.heads = m.num_heads;
  d.kv_heads = m.num_kv_heads;
  d.max_tokens = max_tokens;
  d.sequences = sequences;
  const int64_t h = m.hidden_size, hd = m.head_dim, qw = m.num_heads * hd, kw = m.num_kv_heads * hd;
  uint64_t next = seed * 1000;
  auto matrix = [&](int64_t rows, int64_t cols) {
    return Random(rows * cols, next++, 1.0f / std::sqrt(static_cast<float>(cols)), 0.0f, st);
  };
  auto norm = [&](int64_t n) { return Random(n, next++, 0.1f, 1.0f, st); };
  auto mlp = [&](int64_t inter) -> StatusOr<DeviceMlp> {
    DeviceMlp out;
    out.inter = inter;
    SW_ASSIGN_OR_RETURN(out.gate, matrix(inter, h));
    SW_ASSIGN_OR_RETURN(out.up, matrix(inter, h));
    SW_ASSIGN_OR_RETURN(out.down, matrix(h, inter));
    return out;
  };
  for (const LayerSpec& spec : m.layers) {
    DeviceLayer L;
    SW_ASSIGN_OR_RETURN(L.input_norm, norm(h));
    SW_ASSIGN_OR_RETURN(L.post_norm, norm(h));
    SW_ASSIGN_OR_RETURN(L.q, matrix(qw, h));
    SW_ASSIGN_OR_RETURN(L.k, matrix(kw, h));
    SW_ASSIGN_OR_RETURN(L.v, matrix(kw, h));
    SW_ASSIGN_OR_RETURN(L.o, matrix(h, qw));
    if (!spec.moe()) {
      SW_ASSIGN_OR_RETURN(L.mlp, mlp(m.intermediate_size));
    } else {
      std::vector<float> router(static_cast<size_t>(m.moe.num_experts * h));
      for (size_t i = 0; i < router.size(); ++i)
        router[i] = static_cast<float>((i * 2654435761u) % 1000) / 1000.0f - 0.5f;
      SW_ASSIGN_OR_RETURN(L.router, Upload(router, st));
      for (int64_t e = 0; e < m.moe.num_experts; ++e) {
        SW_ASSIGN_OR_RETURN(DeviceMlp ex, mlp(m.moe.expert_intermediate_size));
        L.experts.push_back(std::move(ex));
      }
    }
    const size_t cache = static_cast<size_t>(sequences * max_tokens * kw);
    SW_ASSIGN_OR_RETURN(L.k_cache, DeviceBuffer<bf16>::Allocate(cache));
    SW_ASSIGN_OR_RETURN(L.v_cache, DeviceBuffer<bf16>::Allocate(cache));
    d.layers.push_back(std::move(L));
  }
  SW_ASSIGN_OR_RETURN(d.embed, matrix(m.vocab_size, h));
  SW_ASSIGN_OR_RETURN(d.final_norm, norm(h));
  SW_ASSIGN_OR_RETURN(d.lm_head, matrix(m.vocab_size, h));
  d.lm_head_rows = m.vocab_size;
  SW_RETURN_IF_ERROR(stream.Synchronize());
  return StageFromShard(std::move(d), std::move(stream), std::move(blas), device);
}

}  // namespace shardwise::cuda
