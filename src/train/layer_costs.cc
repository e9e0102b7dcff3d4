// TrainModel::Passes: one micro-batch through one layer of each kind and the pipeline's ends
// (layer_costs.h).
#include "shardwise/train/layer_costs.h"

#include <cmath>

#include "shardwise/layout/shard_geometry.h"
#include "shardwise/train/step.h"

namespace shardwise::train {
namespace {

constexpr double kReferenceHeadDim = 128;  // the head dimension the attention rates are quoted at

// Time of an [m x k] x [k x n] GEMM: FLOPs at the shape-dependent rate or its operands through
// HBM, whichever is longer.
double GemmTime(const GpuSpec& gpu, double hbm_bytes_per_s, double m, double n, double k,
                Dtype dtype) {
  if (m <= 0 || n <= 0 || k <= 0) return 0;
  const double rate = gpu.PeakFlopsPerS(dtype) * gpu.GemmEfficiency(dtype, m, n, k);
  const double bytes = (n * k + m * (n + k)) * kBf16Bytes;
  return std::max(2 * m * n * k / rate, bytes / hbm_bytes_per_s);
}

// Builds the passes of one config; each block adds its forward and backward to a layer kind.
class PassBuilder {
 public:
  PassBuilder(const Layout& l, const TrainEngine& e, const TrainGpuRates& rates, const GpuSpec& gpu,
              const TrainConfig& c)
      : e_(e), gpu_(gpu) {
    fp8_ = c.dtype == Dtype::kFp8 && gpu.Supports(Dtype::kFp8);
    dtype_ = fp8_ ? Dtype::kFp8 : Dtype::kBf16;
    // A recipe the GPU lacks is refused by TrainModel::Check; its passes are never used.
    const double bf16 = rates.gemm_fraction.at("bf16");
    const auto recipe = rates.gemm_fraction.find(GemmRateKey(c));
    gpu_.gemm_fraction[Dtype::kBf16] = bf16;
    if (fp8_) {
      gpu_.gemm_fraction[Dtype::kFp8] = recipe != rates.gemm_fraction.end() ? recipe->second : bf16;
    }
    hbm_ = gpu.AchievableHbmBytesPerS();
    const MicroBatchTokens t = TokensOf(c, l, e);
    tokens_ = t.tokens;
    sp_tokens_ = t.sp_tokens;
    cast_bytes_ = fp8_ ? e.fp8_cast_bytes.at(c.fp8_recipe) : 0.0;
    cast_kernels_ = fp8_ ? e.kernels_per_fp8_cast : 0.0;
    kernel_s_ = gpu.kernel_latency_s;
    host_s_ = rates.host_s_per_kernel;
  }

  double tokens() const { return tokens_; }
  double sp_tokens() const { return sp_tokens_; }
  double hbm() const { return hbm_; }
  bool fp8() const { return fp8_; }

  // Weight GEMMs of `rows` tokens through `g` (`copies` of it): forward, then the input-gradient
  // and weight-gradient GEMMs with their own shapes.
  void Gemm(double rows, const GemmShape& g, double copies, PassTimes& fwd, PassTimes& bwd,
            Dtype dtype) const {
    fwd.gemm_s += copies * GemmTime(gpu_, hbm_, rows, g.n, g.k, dtype);
    bwd.gemm_s += copies * (GemmTime(gpu_, hbm_, rows, g.k, g.n, dtype) +
                            GemmTime(gpu_, hbm_, g.k, g.n, rows, dtype));
  }
  void LayerGemms(double rows, const std::vector<GemmShape>& gemms, double copies, PassTimes& fwd,
                  PassTimes& bwd) const {
    for (const GemmShape& g : gemms) Gemm(rows, g, copies, fwd, bwd, dtype_);
  }

  // Element-wise traffic: `forward_elements` bf16 tensor passes (elements x passes), the
  // backward the engine's factor of it.
  void Traffic(double forward_elements, PassTimes& fwd, PassTimes& bwd) const {
    const double s = forward_elements * kBf16Bytes / hbm_;
    fwd.memory_s += s;
    bwd.memory_s += e_.backward_traffic_factor * s;
  }
  // FP8 casts of GEMM inputs: `forward` elements (activations) and `backward` (gradients).
  void Casts(double forward, double backward, PassTimes& fwd, PassTimes& bwd) const {
    fwd.memory_s += forward * cast_bytes_ / hbm_;
    bwd.memory_s += backward * cast_bytes_ / hbm_;
  }
  // A block's TP all-gather and reduce-scatter each way (`pair_s`), hidden behind its GEMMs when
  // the engine overlaps them.
  void Tp(double pair_s, PassTimes& fwd, PassTimes& bwd) const {
    const double cost = e_.overlap_compute_cost;
    fwd.tp_comm_s += e_.overlap_tp_comm ? Exposed(pair_s, fwd.gemm_s, cost) : pair_s;
    bwd.tp_comm_s += e_.overlap_tp_comm ? Exposed(pair_s, bwd.gemm_s, cost) : pair_s;
  }

  // `kernels` forward launches plus `casts` FP8 casts; the backward the engine's factor of both.
  // Each costs the GPU its fixed time; the host issues each one unless the block runs as a CUDA
  // graph (`graphed`: one launch for the block, whose host time is negligible).
  void Kernels(double kernels, double casts, bool graphed, PassTimes& fwd, PassTimes& bwd) const {
    const double n = kernels + casts * cast_kernels_;
    const double host = graphed ? 0.0 : host_s_;
    fwd.launch_s += n * kernel_s_;
    fwd.host_s += n * host;
    bwd.launch_s += e_.backward_kernel_factor * n * kernel_s_;
    bwd.host_s += e_.backward_kernel_factor * n * host;
  }

 private:
  const TrainEngine& e_;
  GpuSpec gpu_;
  bool fp8_ = false;
  Dtype dtype_ = Dtype::kBf16;
  double hbm_ = 0, tokens_ = 0, sp_tokens_ = 0;
  double cast_bytes_ = 0, cast_kernels_ = 0, kernel_s_ = 0, host_s_ = 0;
};

// Width of the query and key slices the rotary embedding rewrites on one GPU.
double RopeWidth(const ModelSpec& m, const ModelShard& s) {
  if (m.mla) return (s.heads + 1) * static_cast<double>(m.mla->qk_rope_head_dim);
  const double kv_heads =
      static_cast<double>(KvHeadsPerRank(m.num_heads, m.num_kv_heads, s.layout.tp));
  return (s.heads + kv_heads) * static_cast<double>(m.head_dim);
}

// Passes of the activation function over the FFN width: gate and up in, product out (SwiGLU),
// or in and out.
double ActivationTensors(const ModelSpec& m) { return m.gated_ffn ? 3.0 : 2.0; }

double Sum(const std::vector<GemmShape>& gemms, double GemmShape::*side) {
  double out = 0;
  for (const GemmShape& g : gemms) out += g.*side;
  return out;
}

// Attention block (every layer): norms and residuals, rotary embedding, QKV and output GEMMs,
// their FP8 casts, its TP collectives. Static-shape blocks run as CUDA graphs when the engine
// captures them.
void AttentionBlock(const LayerInputs& in, const PassBuilder& b, PassTimes& f, PassTimes& bw) {
  const ModelShard& s = in.shard;
  const TrainEngine& e = in.engine;
  const double h = static_cast<double>(in.model.hidden_size);
  const double tokens = b.tokens(), sp = b.sp_tokens();
  b.LayerGemms(tokens, s.attention_gemms, 1, f, bw);
  b.Traffic(e.hidden_tensors * sp * h + e.rope_tensors * tokens * RopeWidth(in.model, s), f, bw);
  const double qkv_out = Sum(s.attention_gemms, &GemmShape::n);
  const double proj_in = s.attention_gemms.back().k;
  b.Casts(sp * h + tokens * proj_in, tokens * qkv_out + sp * h, f, bw);
  b.Kernels(e.kernels_attention, 2, e.cuda_graphs, f, bw);
  b.Tp(in.comms.tp_pair_s, f, bw);
}

// A dense MLP on every token (the dense FFN, or MoE's shared experts) into empty `f` and `bw`:
// its TP collectives hide behind its own GEMMs.
void DenseMlp(const LayerInputs& in, const PassBuilder& b, const std::vector<GemmShape>& gemms,
              bool graphed, PassTimes& f, PassTimes& bw) {
  const double h = static_cast<double>(in.model.hidden_size);
  const double tokens = b.tokens(), sp = b.sp_tokens();
  const double width = gemms.back().k;
  b.LayerGemms(tokens, gemms, 1, f, bw);
  b.Traffic(ActivationTensors(in.model) * tokens * width, f, bw);
  b.Casts(sp * h + tokens * width, sp * h + tokens * gemms.front().n, f, bw);
  b.Kernels(in.engine.kernels_dense_mlp, 2, graphed, f, bw);
  b.Tp(in.comms.tp_pair_s, f, bw);
}

// The routed experts (balanced, as NVIDIA's benchmarks force it: each token of the expert group
// goes to k experts), the router, the permutation, the shared experts, dispatch and combine.
void MoeBlock(const LayerInputs& in, const PassBuilder& b, const PassTimes& attn_f,
              const PassTimes& attn_b, PassTimes& f, PassTimes& bw) {
  const ModelSpec& m = in.model;
  const ModelShard& s = in.shard;
  const TrainEngine& e = in.engine;
  const double h = static_cast<double>(m.hidden_size);
  // The expert group's tokens: each attention-DP rank's whole micro-batch, whose sequences its
  // CP ranks hold a slice each (b.tokens() is one slice).
  const double group_tokens =
      static_cast<double>(s.layout.AttentionDp()) * b.tokens() * static_cast<double>(s.layout.cp);
  const double k = static_cast<double>(m.moe.experts_per_token);
  const double per_expert = group_tokens * k / static_cast<double>(m.moe.num_experts);
  const double routed = per_expert * s.experts_per_gpu;
  const double fe = s.expert_gemms.back().k;  // expert FFN width on this GPU
  b.LayerGemms(per_expert, s.expert_gemms, s.experts_per_gpu, f, bw);
  b.Gemm(b.sp_tokens(), s.router_gemm, 1, f, bw, Dtype::kBf16);
  // The experts' activation: fused SwiGLU, or the clamped GLU op by op.
  const bool clamped = m.moe.swiglu_limit > 0;
  b.Traffic((clamped ? e.clamped_glu_tensors : ActivationTensors(m)) * routed * fe, f, bw);
  // Permutation before dispatch and after combine, and the regrouping by local expert.
  b.Traffic(e.moe_token_tensors * routed * h, f, bw);
  b.Casts(routed * (h + fe), routed * (h + 2 * fe), f, bw);
  // A dropless block's shapes follow the routing: it runs kernel by kernel.
  const bool graphed = e.cuda_graphs && in.config.moe_token_drop;
  b.Kernels(e.kernels_moe + s.experts_per_gpu * e.kernels_per_expert +
                (clamped ? e.clamped_glu_kernels - 1 : 0.0),
            2 * s.experts_per_gpu, graphed, f, bw);
  if (!s.shared_gemms.empty()) {
    PassTimes shared_f, shared_b;  // its TP collectives hide behind its own GEMMs
    DenseMlp(in, b, s.shared_gemms, graphed, shared_f, shared_b);
    f.Add(shared_f);
    bw.Add(shared_b);
  }
  // Dispatch and combine hide behind the other micro-batch's pass of the same layer when the
  // engine overlaps them (the forward of one with the backward of the other).
  const double a2a = 2 * in.comms.dispatch_s;
  const double compute = attn_f.GpuTotal() + f.GpuTotal() + attn_b.GpuTotal() + bw.GpuTotal();
  const double exposed =
      e.overlap_ep_comm ? Exposed(2 * a2a, compute, e.overlap_compute_cost) : 2 * a2a;
  f.ep_comm_s = exposed / 2;
  bw.ep_comm_s = exposed / 2;
}

// FlashAttention's (or the materialised scores') rates and traffic, and the CP ring.
void AttentionCore(const LayerInputs& in, LayerCosts& p) {
  const ModelSpec& m = in.model;
  const TrainEngine& e = in.engine;
  const double head_dim =
      m.mla ? static_cast<double>(m.mla->qk_nope_head_dim + m.mla->qk_rope_head_dim)
            : static_cast<double>(m.head_dim);
  const double d0 = e.attention_head_dim_overhead;
  const double head_factor =
      (head_dim / (head_dim + d0)) / (kReferenceHeadDim / (kReferenceHeadDim + d0));
  const double bf16_peak = in.gpu.PeakFlopsPerS(Dtype::kBf16);
  p.attention_flops_per_key_token = in.shard.attention_flops_per_key;
  p.attention_forward_flops_per_s = bf16_peak * in.rates.attention_forward_fraction * head_factor;
  p.attention_backward_flops_per_s = bf16_peak * in.rates.attention_backward_fraction * head_factor;
  // Materialised scores: S written, P read, and the engine's kernels over them.
  p.score_bytes_per_key_token =
      e.flash_attention ? 0.0 : in.shard.heads * (2 + e.score_tensors) * kBf16Bytes;
  p.cp_ring_fwd_s = in.comms.cp_ring_s;
}

// The pipeline's ends: the embedding (first chunk), the loss (last chunk: final norm, LM head in
// bf16 (Megatron's output layer is no FP8 module), the fp32 cross-entropy reading and writing the
// logits each way) and an MTP module besides its layer (the projection of [embedding; hidden]
// back to the hidden size, and a second loss over the shared LM head).
void Ends(const LayerInputs& in, const PassBuilder& b, LayerCosts& p) {
  const ModelSpec& m = in.model;
  const double h = static_cast<double>(m.hidden_size);
  const double tokens = b.tokens();
  b.Traffic(2 * tokens * h, p.embedding_fwd, p.embedding_bwd);
  p.embedding_fwd.tp_comm_s = in.comms.tp_reduce_scatter_s;
  p.embedding_bwd.tp_comm_s = in.comms.tp_all_gather_s;
  const double vocab = static_cast<double>(m.vocab_size) / static_cast<double>(in.shard.layout.tp);
  b.Gemm(tokens, GemmShape{vocab, h}, 1, p.loss_fwd, p.loss_bwd, Dtype::kBf16);
  b.Traffic(4 * b.sp_tokens() * h, p.loss_fwd, p.loss_bwd);
  p.loss_fwd.memory_s += 2 * tokens * vocab * kLogitBytes / b.hbm();
  p.loss_bwd.memory_s += 2 * tokens * vocab * kLogitBytes / b.hbm();
  p.loss_fwd.tp_comm_s = in.comms.tp_all_gather_s;
  p.loss_bwd.tp_comm_s = in.comms.tp_reduce_scatter_s;
  b.Gemm(tokens, GemmShape{h, 2 * h}, 1, p.mtp_fwd, p.mtp_bwd, Dtype::kBf16);
  p.mtp_fwd.Add(p.loss_fwd).Add(p.embedding_fwd);
  p.mtp_bwd.Add(p.loss_bwd).Add(p.embedding_bwd);
  p.send.pp_comm_s = in.comms.pp_send_s;
}

}  // namespace

MicroBatchTokens TokensOf(const TrainConfig& c, const Layout& l, const TrainEngine& e) {
  MicroBatchTokens t;
  t.tokens = static_cast<double>(c.micro_batch * c.seq_len / l.cp);
  t.sp_tokens = e.sequence_parallel ? t.tokens / static_cast<double>(l.tp) : t.tokens;
  return t;
}

std::shared_ptr<const LayerCosts> BuildLayerCosts(const LayerInputs& in) {
  const PassBuilder b(in.shard.layout, in.engine, in.rates, in.gpu, in.config);
  auto out = std::make_shared<LayerCosts>();
  LayerCosts& p = *out;
  p.tokens = b.tokens();
  p.flash = in.engine.flash_attention;
  p.recompute = in.config.recompute;
  p.overlap_cost = in.engine.overlap_compute_cost;
  p.hbm_bytes_per_s = b.hbm();
  p.moe_syncs = in.model.is_moe() && in.shard.layout.ep > 1 && !in.config.moe_token_drop;
  PassTimes attn_f, attn_b, mlp_f, mlp_b;
  AttentionBlock(in, b, attn_f, attn_b);
  DenseMlp(in, b, in.shard.dense_ffn_gemms, in.engine.cuda_graphs, mlp_f, mlp_b);
  p.dense_fwd = p.moe_fwd = attn_f;
  p.dense_bwd = p.moe_bwd = attn_b;
  p.dense_fwd.Add(mlp_f);
  p.dense_bwd.Add(mlp_b);
  if (in.model.is_moe()) {
    PassTimes moe_f, moe_b;
    MoeBlock(in, b, attn_f, attn_b, moe_f, moe_b);
    p.moe_fwd.Add(moe_f);
    p.moe_bwd.Add(moe_b);
  }
  AttentionCore(in, p);
  Ends(in, b, p);
  return out;
}

std::shared_ptr<const LayerCosts> TrainModel::Passes(const TrainConfig& c) const {
  const Layout& l = layout_;
  const double h = static_cast<double>(model_->hidden_size);
  const MicroBatchTokens t = TokensOf(c, l, *engine_);
  LayerComms comms;
  // FP8 GEMM inputs are all-gathered in FP8; the reduce-scatters carry bf16 outputs.
  const bool fp8 = c.dtype == Dtype::kFp8;
  comms.tp_all_gather_s =
      Collective(tp_group_, CollectiveOp::kAllGather, t.tokens * h * (fp8 ? 1.0 : kBf16Bytes));
  comms.tp_reduce_scatter_s =
      Collective(tp_group_, CollectiveOp::kReduceScatter, t.tokens * h * kBf16Bytes);
  comms.tp_pair_s = comms.tp_all_gather_s + comms.tp_reduce_scatter_s;
  if (fp8) {
    comms.tp_all_gather_s =
        Collective(tp_group_, CollectiveOp::kAllGather, t.tokens * h * kBf16Bytes);
  }
  if (model_->is_moe()) comms.dispatch_s = Dispatch(t.sp_tokens, c.moe_token_drop);
  if (l.cp > 1) {
    comms.cp_ring_s =
        static_cast<double>(l.cp - 1) *
        Collective(cp_group_, CollectiveOp::kSendRecv, t.tokens * shard_.kv_bytes_per_token);
  }
  // Scatter/gather (or sequence parallelism) sends 1/tp of the activations per TP rank.
  comms.pp_send_s = Collective(pp_pair_, CollectiveOp::kSendRecv,
                               t.tokens * h * kBf16Bytes / static_cast<double>(l.tp));
  return BuildLayerCosts({*model_, shard_, *engine_, rates_, cluster_->gpu, c, comms});
}

}  // namespace shardwise::train
