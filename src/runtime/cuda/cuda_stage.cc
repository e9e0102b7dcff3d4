// A rank's forward pass on a GPU: the same sharding and the same collectives as the CPU
// RankModel (rank_model.cc), with bf16 weights, bf16 GEMM inputs and fp32 everywhere else.
// Collectives run on host rows through the rank's communicators (the Communicator interface
// takes host spans), so each all-reduce and all-to-all copies its rows off and back onto the GPU.
#include "cuda_stage.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "../routing.h"
#include "shard.h"
#include "shardwise/runtime/cuda/device.h"
#include "shardwise/runtime/cuda/gemm.h"
#include "shardwise/runtime/cuda/ops.h"
#include "shardwise/runtime/rope.h"

namespace shardwise::cuda {

namespace {

// Grows `b` to at least n elements (waiting for `s` first: the old buffer may be in use).
template <typename T>
Status Ensure(DeviceBuffer<T>& b, size_t n, cudaStream_t s) {
  if (b.size() >= n) return Status();
  SW_RETURN_IF_ERROR(CudaStatus(cudaStreamSynchronize(s), "cudaStreamSynchronize"));
  b = DeviceBuffer<T>();
  SW_ASSIGN_OR_RETURN(b, DeviceBuffer<T>::Allocate(n));
  return Status();
}

const bf16* OrNull(const DeviceBuffer<bf16>& b) { return b.size() == 0 ? nullptr : b.data(); }

}  // namespace

namespace {

// Per-call scratch, grown on demand and reused across steps.
struct Scratch {
  DeviceBuffer<float> x, y, q, k, v, attn, gate, up, logits, moe, rope;
  DeviceBuffer<bf16> normed, attn_bf16, act, rows_bf16, last;
  DeviceBuffer<float> normed_f32, route_w, scale, expert_out, reply, attn_partial;
  DeviceBuffer<bf16> gathered;
  DeviceBuffer<int32_t> tokens, seqs, route_ids, index;
};

class CudaStageCompute final : public StageCompute {
 public:
  CudaStageCompute(Shard shard, Stream stream, BlasHandles blas, int device)
      : d_(std::move(shard)), stream_(std::move(stream)), blas_(std::move(blas)), device_(device) {}
  bool first_stage() const override { return d_.first; }
  bool last_stage() const override { return d_.last; }
  int64_t hidden() const override { return d_.model.hidden_size; }
  int64_t vocab() const override { return d_.model.vocab_size; }

  Status Embed(const std::vector<int64_t>& tokens, std::vector<float>& x) override {
    SW_RETURN_IF_ERROR(UseDevice(device_));
    const int64_t rows = static_cast<int64_t>(tokens.size()), h = hidden();
    const std::vector<int32_t> ids(tokens.begin(), tokens.end());
    SW_RETURN_IF_ERROR(Put(s_.tokens, ids));
    SW_RETURN_IF_ERROR(Ensure(s_.x, static_cast<size_t>(rows * h), st()));
    SW_RETURN_IF_ERROR(cuda::Embed(d_.embed.data(), s_.tokens.data(), s_.x.data(), rows, h, st()));
    x.assign(static_cast<size_t>(rows * h), 0.0f);
    return Get(s_.x, x);
  }

  // Without CP (CheckCudaSupport) the rows are `len` consecutive positions from `pos`.
  Status Forward(std::vector<float>& x, const std::vector<int>& seqs,
                 const std::vector<int64_t>& positions, int64_t context, bool split,
                 const RankComms& c) override {
    const int64_t len = static_cast<int64_t>(positions.size());
    const int64_t pos = positions.empty() ? 0 : positions.front();
    if ((c.cp != nullptr && c.cp->size() > 1) || (split && pos != 0) || pos + len != context) {
      return Error("the CUDA backend runs consecutive positions without context parallelism");
    }
    SW_RETURN_IF_ERROR(UseDevice(device_));
    const int64_t h = hidden(), rows = static_cast<int64_t>(seqs.size()) * len;
    SW_RETURN_IF_ERROR(Put(s_.x, x));
    SW_RETURN_IF_ERROR(Put(s_.seqs, std::vector<int32_t>(seqs.begin(), seqs.end())));
    SW_RETURN_IF_ERROR(Ensure(s_.normed, static_cast<size_t>(rows * h), st()));
    SW_RETURN_IF_ERROR(Ensure(s_.normed_f32, static_cast<size_t>(rows * h), st()));
    SW_RETURN_IF_ERROR(Ensure(s_.y, static_cast<size_t>(rows * h), st()));
    SW_RETURN_IF_ERROR(UploadRope(pos + len));
    const double eps = d_.model.rms_norm_eps;
    for (DeviceLayer& L : d_.layers) {
      SW_RETURN_IF_ERROR(
          RmsNorm(s_.x.data(), L.input_norm.data(), s_.normed.data(), rows, h, eps, st()));
      SW_RETURN_IF_ERROR(Attention(L, rows, pos, len, c));
      SW_RETURN_IF_ERROR(Add(s_.x.data(), s_.y.data(), rows * h, st()));
      if (L.mlp) {
        SW_RETURN_IF_ERROR(
            RmsNorm(s_.x.data(), L.post_norm.data(), s_.normed.data(), rows, h, eps, st()));
        SW_RETURN_IF_ERROR(Mlp(*L.mlp, s_.normed.data(), rows, s_.y.data()));
        SW_RETURN_IF_ERROR(AllReduce(c.tp, s_.y, rows * h));
      } else {
        SW_RETURN_IF_ERROR(
            RmsNorm(s_.x.data(), L.post_norm.data(), s_.normed_f32.data(), rows, h, eps, st()));
        SW_RETURN_IF_ERROR(ToBf16(s_.normed_f32.data(), s_.normed.data(), rows * h, st()));
        SW_RETURN_IF_ERROR(Moe(L, rows, c));
      }
      SW_RETURN_IF_ERROR(Add(s_.x.data(), s_.y.data(), rows * h, st()));
    }
    return Get(s_.x, x);
  }

  Status Logits(const std::vector<float>& x, int64_t seqs, int64_t len, std::vector<float>& out,
                Communicator& tp) override {
    SW_RETURN_IF_ERROR(UseDevice(device_));
    const int64_t h = hidden(), v = d_.lm_head_rows, rows = seqs * len;
    SW_RETURN_IF_ERROR(Put(s_.x, x));
    SW_RETURN_IF_ERROR(Ensure(s_.normed, static_cast<size_t>(rows * h), st()));
    SW_RETURN_IF_ERROR(RmsNorm(s_.x.data(), d_.final_norm.data(), s_.normed.data(), rows, h,
                               d_.model.rms_norm_eps, st()));
    std::vector<int32_t> last(static_cast<size_t>(seqs));
    for (int64_t i = 0; i < seqs; ++i)
      last[static_cast<size_t>(i)] = static_cast<int32_t>((i + 1) * len - 1);
    SW_RETURN_IF_ERROR(Put(s_.index, last));
    SW_RETURN_IF_ERROR(Ensure(s_.last, static_cast<size_t>(seqs * h), st()));
    SW_RETURN_IF_ERROR(
        GatherRows(s_.normed.data(), s_.index.data(), s_.last.data(), seqs, h, st()));
    SW_RETURN_IF_ERROR(Ensure(s_.logits, static_cast<size_t>(seqs * v), st()));
    SW_RETURN_IF_ERROR(
        Gemm(blas_, s_.last.data(), d_.lm_head.data(), s_.logits.data(), seqs, v, h));
    std::vector<float> mine(static_cast<size_t>(seqs * v));
    SW_RETURN_IF_ERROR(Get(s_.logits, mine));
    return GatherVocabShares(mine, seqs, v, vocab(), tp, out);
  }
  // Capacity factors are refused (CheckCudaSupport), so nothing is dropped; routed pairs are
  // not counted on the GPU.
  MoeCounts moe_counts() const override { return {}; }

 private:
  cudaStream_t st() const { return stream_.get(); }

  // Host -> device (growing the buffer) and device -> host, both waiting for completion.
  template <typename T>
  Status Put(DeviceBuffer<T>& b, const std::vector<T>& host) {
    SW_RETURN_IF_ERROR(Ensure(b, host.size(), st()));
    SW_RETURN_IF_ERROR(b.CopyFromHost(std::span<const T>(host), st()));
    return stream_.Synchronize();  // `host` may be a temporary
  }
  template <typename T>
  Status Get(const DeviceBuffer<T>& b, std::vector<T>& host) {
    SW_RETURN_IF_ERROR(b.CopyToHost(std::span<T>(host), st()));
    return stream_.Synchronize();
  }

  // Sums `n` floats of `b` over the group (through host memory; nothing to do for one rank).
  Status AllReduce(Communicator* comm, DeviceBuffer<float>& b, int64_t n) {
    if (comm->size() == 1) return Status();
    host_.assign(static_cast<size_t>(n), 0.0f);
    SW_RETURN_IF_ERROR(Get(b, host_));
    SW_RETURN_IF_ERROR(comm->AllReduceSum(host_));
    return Put(b, host_);
  }

  // RoPE frequencies (rope_scaling included) for sequences reaching `seq_len` tokens.
  Status UploadRope(int64_t seq_len) {
    const RopeFrequencies rope = ComputeRopeFrequencies(d_.model, d_.model.head_dim, seq_len);
    rope_scale_ = static_cast<float>(rope.attention_factor);
    return Put(s_.rope, std::vector<float>(rope.inv_freq.begin(), rope.inv_freq.end()));
  }

  // y[rows x H] = mlp(h) (this rank's share of the FFN width).
  Status Mlp(const DeviceMlp& m, const bf16* h, int64_t rows, float* y) {
    const int64_t hidden_size = hidden(), n = rows * m.inter;
    SW_RETURN_IF_ERROR(Ensure(s_.gate, static_cast<size_t>(n), st()));
    SW_RETURN_IF_ERROR(Ensure(s_.up, static_cast<size_t>(n), st()));
    SW_RETURN_IF_ERROR(Ensure(s_.act, static_cast<size_t>(n), st()));
    SW_RETURN_IF_ERROR(Gemm(blas_, h, m.gate.data(), s_.gate.data(), rows, m.inter, hidden_size));
    SW_RETURN_IF_ERROR(Gemm(blas_, h, m.up.data(), s_.up.data(), rows, m.inter, hidden_size));
    SW_RETURN_IF_ERROR(SiluMul(s_.gate.data(), s_.up.data(), s_.act.data(), n, st()));
    return Gemm(blas_, s_.act.data(), m.down.data(), y, rows, hidden_size, m.inter);
  }

  // s_.y = o_proj(attention(q, k, v)) summed over the TP group; appends to the KV caches.
  Status Attention(DeviceLayer& L, int64_t rows, int64_t pos, int64_t len, const RankComms& c) {
    const ModelSpec& m = d_.model;
    const int64_t h = m.hidden_size, hd = m.head_dim, qw = d_.heads * hd, kw = d_.kv_heads * hd;
    SW_RETURN_IF_ERROR(Ensure(s_.q, static_cast<size_t>(rows * qw), st()));
    SW_RETURN_IF_ERROR(Ensure(s_.k, static_cast<size_t>(rows * kw), st()));
    SW_RETURN_IF_ERROR(Ensure(s_.v, static_cast<size_t>(rows * kw), st()));
    SW_RETURN_IF_ERROR(Ensure(s_.attn, static_cast<size_t>(rows * qw), st()));
    SW_RETURN_IF_ERROR(Ensure(s_.attn_bf16, static_cast<size_t>(rows * qw), st()));
    const bf16* in = s_.normed.data();
    SW_RETURN_IF_ERROR(Gemm(blas_, in, L.q.data(), s_.q.data(), rows, qw, h));
    SW_RETURN_IF_ERROR(Gemm(blas_, in, L.k.data(), s_.k.data(), rows, kw, h));
    SW_RETURN_IF_ERROR(Gemm(blas_, in, L.v.data(), s_.v.data(), rows, kw, h));
    if (const bf16* b = OrNull(L.q_bias))
      SW_RETURN_IF_ERROR(AddBias(s_.q.data(), b, rows, qw, st()));
    if (const bf16* b = OrNull(L.k_bias))
      SW_RETURN_IF_ERROR(AddBias(s_.k.data(), b, rows, kw, st()));
    if (const bf16* b = OrNull(L.v_bias))
      SW_RETURN_IF_ERROR(AddBias(s_.v.data(), b, rows, kw, st()));
    if (L.q_norm.size() > 0) {  // Qwen3: RMSNorm over each head before RoPE
      SW_RETURN_IF_ERROR(RmsNorm(s_.q.data(), L.q_norm.data(), s_.q.data(), rows * d_.heads, hd,
                                 m.rms_norm_eps, st()));
      SW_RETURN_IF_ERROR(RmsNorm(s_.k.data(), L.k_norm.data(), s_.k.data(), rows * d_.kv_heads, hd,
                                 m.rms_norm_eps, st()));
    }
    SW_RETURN_IF_ERROR(
        Rope(s_.q.data(), rows, d_.heads, hd, len, pos, s_.rope.data(), rope_scale_, st()));
    SW_RETURN_IF_ERROR(
        Rope(s_.k.data(), rows, d_.kv_heads, hd, len, pos, s_.rope.data(), rope_scale_, st()));
    SW_RETURN_IF_ERROR(AppendKv(s_.k.data(), s_.v.data(), L.k_cache.data(), L.v_cache.data(),
                                s_.seqs.data(), rows, len, pos, d_.max_tokens, kw, st()));
    AttentionShape shape;
    shape.rows = rows;
    shape.len = len;
    shape.pos0 = pos;
    shape.heads = d_.heads;
    shape.kv_heads = d_.kv_heads;
    shape.head_dim = hd;
    shape.head_begin = d_.head_begin;
    shape.kv_begin = d_.kv_begin;
    shape.group = m.num_heads / m.num_kv_heads;
    shape.max_tokens = d_.max_tokens;
    shape.scale = 1.0f / std::sqrt(static_cast<float>(hd));
    SW_RETURN_IF_ERROR(Ensure(s_.attn_partial, AttentionWorkspaceFloats(shape), st()));
    SW_RETURN_IF_ERROR(cuda::Attention(s_.q.data(), L.k_cache.data(), L.v_cache.data(),
                                       s_.seqs.data(), s_.attn.data(), s_.attn_partial.data(),
                                       shape, st()));
    SW_RETURN_IF_ERROR(ToBf16(s_.attn.data(), s_.attn_bf16.data(), rows * qw, st()));
    SW_RETURN_IF_ERROR(Gemm(blas_, s_.attn_bf16.data(), L.o.data(), s_.y.data(), rows, h, qw));
    if (const bf16* b = OrNull(L.o_bias))
      SW_RETURN_IF_ERROR(AddBias(s_.y.data(), b, rows, h, st()));
    return AllReduce(c.tp, s_.y, rows * h);
  }

  Status Moe(DeviceLayer& L, int64_t rows, const RankComms& c);
  // Applies experts to rows of `in` (bf16 [* x H] on the device): for each expert e of
  // `groups` (local index), rows index[i] get weight[i] * expert(row) added to out[index[i]].
  Status ApplyExperts(const DeviceLayer& L, const bf16* in, float* out,
                      const std::vector<std::vector<std::pair<int32_t, float>>>& groups);

  Shard d_;
  Stream stream_;
  BlasHandles blas_;
  int device_;
  Scratch s_;
  std::vector<float> host_;
  float rope_scale_ = 1.0f;
};

Status CudaStageCompute::ApplyExperts(
    const DeviceLayer& L, const bf16* in, float* out,
    const std::vector<std::vector<std::pair<int32_t, float>>>& groups) {
  const int64_t h = hidden();
  std::vector<int32_t> index;
  std::vector<float> weight;
  for (size_t e = 0; e < groups.size(); ++e) {
    if (groups[e].empty()) continue;
    const int64_t n = static_cast<int64_t>(groups[e].size());
    index.clear();
    weight.clear();
    for (const auto& [row, w] : groups[e]) {
      index.push_back(row);
      weight.push_back(w);
    }
    SW_RETURN_IF_ERROR(Put(s_.index, index));
    SW_RETURN_IF_ERROR(Put(s_.route_w, weight));
    SW_RETURN_IF_ERROR(Ensure(s_.gathered, static_cast<size_t>(n * h), st()));
    SW_RETURN_IF_ERROR(Ensure(s_.expert_out, static_cast<size_t>(n * h), st()));
    SW_RETURN_IF_ERROR(GatherRows(in, s_.index.data(), s_.gathered.data(), n, h, st()));
    SW_RETURN_IF_ERROR(Mlp(L.experts[e], s_.gathered.data(), n, s_.expert_out.data()));
    SW_RETURN_IF_ERROR(
        ScatterAddRows(s_.expert_out.data(), s_.index.data(), s_.route_w.data(), out, n, h, st()));
  }
  return Status();
}

// The MoE block as RankModel::Moe computes it: shared expert, fp32 routing (softmax, top-k),
// experts grouped by expert (one GEMM chain per expert over its tokens), EP dispatch and
// combine by all-to-all of (token, expert, hidden) records, then the TP all-reduce.
Status CudaStageCompute::Moe(DeviceLayer& L, int64_t rows, const RankComms& c) {
  const ModelSpec& m = d_.model;
  const int64_t h = m.hidden_size, experts = m.moe.num_experts, k = m.moe.experts_per_token;
  SW_RETURN_IF_ERROR(CudaStatus(
      cudaMemsetAsync(s_.y.data(), 0, static_cast<size_t>(rows * h) * sizeof(float), st()),
      "cudaMemsetAsync"));
  if (L.shared) {
    SW_RETURN_IF_ERROR(Ensure(s_.moe, static_cast<size_t>(rows * h), st()));
    SW_RETURN_IF_ERROR(Mlp(*L.shared, s_.normed.data(), rows, s_.moe.data()));
    if (L.shared_gate.size() > 0) {
      SW_RETURN_IF_ERROR(Ensure(s_.scale, static_cast<size_t>(rows), st()));
      SW_RETURN_IF_ERROR(
          SigmoidGate(s_.normed.data(), L.shared_gate.data(), s_.scale.data(), rows, h, st()));
      SW_RETURN_IF_ERROR(ScaleRows(s_.moe.data(), s_.scale.data(), rows, h, st()));
    }
    SW_RETURN_IF_ERROR(Add(s_.y.data(), s_.moe.data(), rows * h, st()));
  }
  SW_RETURN_IF_ERROR(Ensure(s_.logits, static_cast<size_t>(rows * experts), st()));
  SW_RETURN_IF_ERROR(Ensure(s_.route_ids, static_cast<size_t>(rows * k), st()));
  SW_RETURN_IF_ERROR(Ensure(s_.route_w, static_cast<size_t>(rows * k), st()));
  SW_RETURN_IF_ERROR(
      GemmF32(blas_, s_.normed_f32.data(), L.router.data(), s_.logits.data(), rows, experts, h));
  std::vector<int32_t> ids(static_cast<size_t>(rows * k));
  std::vector<float> weights(static_cast<size_t>(rows * k));
  if (!m.moe.sigmoid_scores && m.moe.num_groups <= 1 && L.score_bias.empty()) {
    // Softmax top-k on the device (Mixtral, Qwen-MoE).
    SW_RETURN_IF_ERROR(TopK(s_.logits.data(), rows, experts, k, m.norm_topk_prob,
                            s_.route_ids.data(), s_.route_w.data(), st()));
    SW_RETURN_IF_ERROR(Get(s_.route_ids, ids));
    SW_RETURN_IF_ERROR(Get(s_.route_w, weights));
    for (float& w : weights) w *= static_cast<float>(m.moe.routed_scaling_factor);
  } else {
    // DeepSeek-V3's sigmoid, bias-corrected, group-limited routing: the CPU router's own code
    // on the logits computed here.
    std::vector<float> logits(static_cast<size_t>(rows * experts));
    SW_RETURN_IF_ERROR(Get(s_.logits, logits));
    const Routes routes = RouteTokens(m.moe, m.norm_topk_prob, logits.data(),
                                      L.score_bias.empty() ? nullptr : L.score_bias.data(), rows);
    for (int64_t t = 0; t < rows; ++t) {
      for (int64_t j = 0; j < k; ++j) {
        ids[static_cast<size_t>(t * k + j)] = static_cast<int32_t>(routes[t][j].first);
        weights[static_cast<size_t>(t * k + j)] = routes[t][j].second;
      }
    }
  }
  const int64_t local = static_cast<int64_t>(L.experts.size());
  std::vector<std::vector<std::pair<int32_t, float>>> groups(static_cast<size_t>(local));
  if (d_.layout.ep == 1) {  // every expert here, split over TP
    for (int64_t t = 0; t < rows; ++t) {
      for (int64_t j = 0; j < k; ++j) {
        groups[static_cast<size_t>(ids[t * k + j])].emplace_back(static_cast<int32_t>(t),
                                                                 weights[t * k + j]);
      }
    }
    SW_RETURN_IF_ERROR(ApplyExperts(L, s_.normed.data(), s_.y.data(), groups));
    return AllReduce(c.tp, s_.y, rows * h);
  }
  // Expert parallelism, with RankModel::Moe's protocol: this rank dispatches tokens t with
  // t % tp == tp_index, each (token, expert) to every expert-TP rank owning the expert.
  std::vector<float> normed(static_cast<size_t>(rows * h));
  SW_RETURN_IF_ERROR(Get(s_.normed_f32, normed));
  const int ranks = c.stage->size();
  const int64_t etp = d_.layout.ExpertTp(), tp = d_.layout.tp, record = 2 + h;
  std::vector<std::vector<float>> send(static_cast<size_t>(ranks));
  for (int64_t t = d_.place.tp_index; t < rows; t += tp) {
    for (int64_t j = 0; j < k; ++j) {
      const int64_t e = ids[t * k + j], owner = e / local;
      for (int64_t r = 0; r < etp; ++r) {
        std::vector<float>& b = send[static_cast<size_t>(owner * etp + r)];
        b.push_back(static_cast<float>(t));
        b.push_back(static_cast<float>(e));
        b.insert(b.end(), normed.begin() + t * h, normed.begin() + (t + 1) * h);
      }
    }
  }
  std::vector<float> flat, recv;
  std::vector<int64_t> counts, recv_counts;
  for (const auto& b : send) {
    flat.insert(flat.end(), b.begin(), b.end());
    counts.push_back(static_cast<int64_t>(b.size()));
  }
  SW_RETURN_IF_ERROR(c.stage->AllToAllV(flat, counts, recv, recv_counts));
  const int64_t n = static_cast<int64_t>(recv.size()) / record;
  std::vector<float> in(static_cast<size_t>(n * h));
  for (int64_t i = 0; i < n; ++i) {
    std::copy_n(recv.begin() + i * record + 2, h, in.begin() + i * h);
    const int64_t e = static_cast<int64_t>(recv[static_cast<size_t>(i * record + 1)]);
    groups[static_cast<size_t>(e - d_.expert_begin)].emplace_back(static_cast<int32_t>(i), 1.0f);
  }
  SW_RETURN_IF_ERROR(Put(s_.moe, in));
  SW_RETURN_IF_ERROR(Ensure(s_.rows_bf16, static_cast<size_t>(n * h), st()));
  SW_RETURN_IF_ERROR(Ensure(s_.reply, static_cast<size_t>(n * h), st()));
  SW_RETURN_IF_ERROR(ToBf16(s_.moe.data(), s_.rows_bf16.data(), n * h, st()));
  if (n > 0) {
    SW_RETURN_IF_ERROR(CudaStatus(
        cudaMemsetAsync(s_.reply.data(), 0, static_cast<size_t>(n * h) * sizeof(float), st()),
        "cudaMemsetAsync"));
  }
  SW_RETURN_IF_ERROR(ApplyExperts(L, s_.rows_bf16.data(), s_.reply.data(), groups));
  SW_RETURN_IF_ERROR(Get(s_.reply, in));
  std::vector<float> reply(recv.size());
  for (int64_t i = 0; i < n; ++i) {
    reply[static_cast<size_t>(i * record)] = recv[static_cast<size_t>(i * record)];
    reply[static_cast<size_t>(i * record + 1)] = recv[static_cast<size_t>(i * record + 1)];
    std::copy_n(in.begin() + i * h, h, reply.begin() + i * record + 2);
  }
  std::vector<float> back;
  std::vector<int64_t> back_counts;
  SW_RETURN_IF_ERROR(c.stage->AllToAllV(reply, recv_counts, back, back_counts));
  std::vector<float> out(static_cast<size_t>(rows * h));
  SW_RETURN_IF_ERROR(Get(s_.y, out));
  for (size_t off = 0; off < back.size(); off += static_cast<size_t>(record)) {
    const int64_t t = static_cast<int64_t>(back[off]), e = static_cast<int64_t>(back[off + 1]);
    float weight = 0;
    for (int64_t j = 0; j < k; ++j) {
      if (ids[t * k + j] == e) weight = weights[t * k + j];
    }
    for (int64_t d = 0; d < h; ++d)
      out[static_cast<size_t>(t * h + d)] += weight * back[off + 2 + static_cast<size_t>(d)];
  }
  SW_RETURN_IF_ERROR(Put(s_.y, out));
  return AllReduce(c.tp, s_.y, rows * h);
}

}  // namespace

std::unique_ptr<StageCompute> StageFromShard(Shard shard, Stream stream, BlasHandles blas,
                                             int device) {
  return std::make_unique<CudaStageCompute>(std::move(shard), std::move(stream), std::move(blas),
                                            device);
}

Status CheckCudaSupport(const ModelSpec& m, const Layout& l, const MoeRunOptions& moe) {
  const std::string why = m.mla                        ? "multi-head latent attention (MLA)"
                          : m.num_sliding_layers() > 0 ? "sliding-window attention"
                          : m.attention_sinks          ? "attention sinks"
                          : m.moe.expert_bias || m.moe.router_bias ? "biased experts or routers"
                          : l.cp > 1                               ? "context parallelism"
                          : moe.redundant_experts != 0             ? "redundant experts"
                          : moe.capacity_factor > 0                ? "an expert capacity factor"
                                                                   : "";
  if (why.empty()) return Status();
  return Error(fmt::format(
      "the CUDA backend does not execute {} ({}) yet; use --device-compute cpu", m.name, why));
}

}  // namespace shardwise::cuda
