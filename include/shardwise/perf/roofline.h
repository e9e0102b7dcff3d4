// Rooflines and critical batch sizes. Decode arithmetic intensity against batch on one GPU
// (FLOPs per byte of weights and KV read), the batch where decode turns compute-bound (seed
// 000's "sweet spot", about peak FLOP/s / HBM bandwidth x total / active parameters), and the
// critical sizes of How to Think About GPUs: the per-GPU token batch that keeps data parallelism (or FSDP)
// compute-bound, the largest TP degree that stays compute-bound, and the expert FFN width
// above which expert parallelism's all-to-all hides behind compute. Pure functions.
#pragma once

#include <cstdint>
#include <vector>

#include "shardwise/hw/gpu.h"
#include "shardwise/model/model_spec.h"

namespace shardwise {

struct RooflinePoint {
  int64_t batch = 0;
  double flops = 0;             // one decode step
  double bytes = 0;             // weights touched + KV read
  double intensity = 0;         // flops / bytes
  double attainable_flops_per_s = 0;  // min(achievable peak, intensity x achievable bandwidth)
  bool compute_bound = false;
};

struct CriticalSizes {
  double bandwidth_bytes_per_s = 0;  // per GPU
  double dp_tokens_per_gpu = 0;      // DP / FSDP: per-GPU batch above which compute hides comm
  double max_tp = 0;                 // TP degree below which compute hides comm
  double ep_min_expert_ffn = 0;      // EP: expert FFN width above which compute hides comm
};

struct Roofline {
  Dtype compute_dtype = Dtype::kBf16;
  double ridge_flops_per_byte = 0;  // achievable peak / achievable HBM bandwidth
  double sweet_spot_batch = 0;      // The Math Behind LLM Pricing 05: ridge x bytes per param / 2 x total / active
  int64_t compute_bound_batch = 0;  // first batch of `points` that is compute-bound; 0: none
  std::vector<RooflinePoint> points;
  CriticalSizes intra_node;  // over the scale-up link
  CriticalSizes inter_node;  // over the node's NICs
  int64_t ep_degree = 8;     // Z used for the EP rule
};

// `context` tokens of KV per sequence are read each decode step (0: weights only, as The Math Behind LLM Pricing 05).
Roofline ComputeRoofline(const ModelSpec& model, const GpuSpec& gpu, Dtype weight_dtype,
                         Dtype kv_dtype, int64_t context, int64_t gpus_per_node);

}  // namespace shardwise
