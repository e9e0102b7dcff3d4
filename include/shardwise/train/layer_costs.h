// LayerCosts: what one micro-batch costs one GPU in one layer of each kind (dense-FFN, MoE), in
// the attention core per key span, and in the ends of the pipeline (embedding; the loss: final
// norm, LM head and cross-entropy; a multi-token-prediction module), forward and backward, under
// a training engine, its rates on the GPU and a config. Per layer: weight GEMMs at the
// shape-dependent rate of the GEMM format (backward = input-gradient and weight-gradient GEMMs),
// attention at FlashAttention's rate, element-wise and FP8-cast traffic at achievable HBM
// bandwidth, the GPU's fixed time per kernel, TP all-gathers and reduce-scatters (hidden behind
// the GEMMs they feed when the engine overlaps them), EP dispatch and combine (hidden behind the
// other micro-batch's layer when overlapped), and the host's time to launch the kernels.
// BuildLayerCosts composes them from the collectives TrainModel::Passes (step.h) prices; plain
// value types and pure functions.
#pragma once

#include <algorithm>
#include <memory>

#include "shardwise/hw/gpu.h"
#include "shardwise/model/model_spec.h"
#include "shardwise/perf/shard.h"
#include "shardwise/train/engine.h"
#include "shardwise/train/options.h"

namespace shardwise::train {

// Bytes of one logit and its gradient in the cross-entropy: fp32.
inline constexpr double kLogitBytes = 4;

// Time of one micro-batch through one layer or stage, by kind.
struct PassTimes {
  double gemm_s = 0;       // weight GEMMs (FLOP-bound)
  double attention_s = 0;  // score and value products, and score traffic when materialised
  double memory_s = 0;     // element-wise kernels, FP8 casts, logits (HBM-bound)
  double launch_s = 0;     // the GPU's fixed time per kernel: launch, ramp, drain
  double tp_comm_s = 0;    // exposed part of TP collectives
  double ep_comm_s = 0;    // exposed part of EP dispatch and combine
  double cp_comm_s = 0;    // exposed part of the ring passes
  double pp_comm_s = 0;
  double host_s = 0;  // host time to issue the kernels; it runs ahead of the GPU (step.h)
  double GpuTotal() const {
    return gemm_s + attention_s + memory_s + launch_s + tp_comm_s + ep_comm_s + cp_comm_s +
           pp_comm_s;
  }
  PassTimes& Add(const PassTimes& other, double times = 1) {
    gemm_s += other.gemm_s * times;
    attention_s += other.attention_s * times;
    memory_s += other.memory_s * times;
    launch_s += other.launch_s * times;
    tp_comm_s += other.tp_comm_s * times;
    ep_comm_s += other.ep_comm_s * times;
    cp_comm_s += other.cp_comm_s * times;
    pp_comm_s += other.pp_comm_s * times;
    host_s += other.host_s * times;
    return *this;
  }
};

// Time a collective of `comm_s` adds when it runs under `window_s` of compute: what sticks out,
// plus `cost` of the hidden part (the SMs and HBM bandwidth its kernels take from the compute).
inline double Exposed(double comm_s, double window_s, double cost) {
  return std::max(0.0, comm_s - window_s) + cost * std::min(comm_s, window_s);
}

struct LayerCosts {
  // One layer without its attention core; the backward without recomputation.
  PassTimes dense_fwd, dense_bwd, moe_fwd, moe_bwd;
  PassTimes embedding_fwd, embedding_bwd;  // first chunk
  PassTimes loss_fwd, loss_bwd;            // last chunk
  PassTimes mtp_fwd, mtp_bwd;  // one MTP module besides its layer (projection, second loss)
  PassTimes send;              // PP hand-off of one micro-batch, one direction, one chunk
  double attention_flops_per_key_token = 0;  // attention FLOPs per (query, key) on this GPU
  double attention_forward_flops_per_s = 0;
  double attention_backward_flops_per_s = 0;
  double score_bytes_per_key_token = 0;  // materialised scores through HBM, forward
  double hbm_bytes_per_s = 0;
  double tokens = 0;
  bool flash = true;
  bool moe_syncs = false;  // dropless MoE layers wait on the host in their forward pass
  Recompute recompute = Recompute::kFull;  // the config's mode (selective matters here)
  double cp_ring_fwd_s = 0;                // one layer's ring passes, forward
  double overlap_cost = 0;                 // compute lost per second of overlapped communication

  // Attention core of one layer whose queries see `keys` keys, added to `fwd` and `bwd`; the
  // backward includes a recomputed forward when the layer is recomputed in full (`full`), or
  // under selective recompute of materialised scores.
  void Attention(double keys, bool full, PassTimes& fwd, PassTimes& bwd) const {
    const double pairs = tokens * (flash ? keys / 2 : keys);  // flash skips masked blocks
    const double flops = pairs * attention_flops_per_key_token;
    const double traffic = tokens * keys * score_bytes_per_key_token / hbm_bytes_per_s;
    const double forward = flops / attention_forward_flops_per_s + traffic;
    // FlashAttention-2's backward runs five matmuls against the forward's two; materialised
    // attention's backward runs four (dS, dQ, dK, dV) and the softmax: twice the forward.
    const double backward =
        flops * (flash ? 2.5 : 2.0) / attention_backward_flops_per_s + 2 * traffic;
    const bool again = full || (recompute == Recompute::kSelective && !flash);
    fwd.attention_s += forward;
    bwd.attention_s += backward + (again ? forward : 0.0);
    // CP ring passes hide behind the attention they feed.
    fwd.cp_comm_s += Exposed(cp_ring_fwd_s, forward, overlap_cost);
    bwd.cp_comm_s += Exposed(2 * cp_ring_fwd_s, backward, overlap_cost) +
                     (again ? Exposed(cp_ring_fwd_s, forward, overlap_cost) : 0);
  }
};

// Tokens of one micro-batch on one GPU: its sequence slice (split by CP), and the share sequence
// parallelism leaves each TP rank outside the GEMMs.
struct MicroBatchTokens {
  double tokens = 0;
  double sp_tokens = 0;
};
MicroBatchTokens TokensOf(const TrainConfig& config, const Layout& layout,
                          const TrainEngine& engine);

// The collectives of one micro-batch through one layer and the pipeline's ends, priced on the
// cluster by the caller.
struct LayerComms {
  double tp_pair_s = 0;            // one all-gather (FP8 under FP8) and one reduce-scatter
  double tp_all_gather_s = 0;      // of bf16 activations (the loss's gather, embedding's backward)
  double tp_reduce_scatter_s = 0;  // of bf16 activations
  double dispatch_s = 0;           // one EP dispatch (or combine)
  double cp_ring_s = 0;            // one layer's ring passes, forward
  double pp_send_s = 0;            // one hand-off to the next stage
};

struct LayerInputs {
  const ModelSpec& model;
  const ModelShard& shard;
  const TrainEngine& engine;
  const TrainGpuRates& rates;
  const GpuSpec& gpu;
  const TrainConfig& config;
  LayerComms comms;
};

// One micro-batch through one layer of each kind and the pipeline's ends.
std::shared_ptr<const LayerCosts> BuildLayerCosts(const LayerInputs& inputs);

}  // namespace shardwise::train
