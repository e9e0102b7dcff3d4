// Memory per GPU of a training step: model states (bf16 weights, gradients, fp32 Adam master
// weights and moments) by ZeRO stage, after Rajbhandari et al. ("ZeRO", SC20: 2 + 2 + 12 bytes
// per parameter, stage 1 shards the 12, stage 2 also the gradients, stage 3 everything), and
// activations per layer by recompute mode after Korthikanti et al. ("Reducing Activation
// Recomputation in Large Transformer Models", arXiv:2205.05198: s b h (34 + 5 a s / h) bytes per
// GPT layer, split by TP and sequence parallelism). Pure functions.
#pragma once

#include "shardwise/model/model_spec.h"
#include "shardwise/perf/shard.h"
#include "shardwise/train/engine.h"
#include "shardwise/train/options.h"

namespace shardwise::train {

// Bytes per element of the bf16 weights, activations and gradients a training step moves.
inline constexpr double kBf16Bytes = 2;

struct ModelStates {
  double weight_bytes = 0;     // bf16 weights, their fp8 copy or fp8 weights alone
  double grad_bytes = 0;       // gradient buffer in the engine's format
  double optimizer_bytes = 0;  // fp32 master weights, Adam m and v: 12 bytes per parameter
};

// Model states of `params` parameters held by one GPU, replicated over `replicas` data-parallel
// ranks that ZeRO may shard them over.
ModelStates ModelStateBytes(double params, double replicas, int zero, double weight_bytes_per_param,
                            double grad_bytes_per_param);

// Bytes per parameter of the weights a GPU computes with: bf16; under FP8 the bf16 weights and
// their FP8 copy, or the FP8 weights alone when the engine keeps its parameters in FP8 (Megatron's
// --fp8-param-gather; the fp32 master copy is the optimizer's).
double WeightBytesPerParam(const TrainEngine& engine, const TrainConfig& config);

// Activation bytes one layer keeps per token of this GPU's sequence slice for the backward pass
// (`moe` for a MoE layer), under the engine's kernels and the recompute mode; `keys` is the
// attention span of a query; `fp8_inputs` when FP8 GEMMs keep their inputs in FP8 (1 byte) for
// the weight gradient. Full recompute keeps the layer input only.
double ActivationBytesPerToken(const ModelSpec& model, const ModelShard& shard,
                               const TrainEngine& engine, Recompute recompute, bool moe,
                               double keys, bool fp8_inputs = false);

struct TrainMemory {
  double hbm_bytes = 0;
  double usable_bytes = 0;  // HBM x the engine's usable fraction
  ModelStates states;
  double activation_bytes = 0;  // in-flight micro-batches' activations + one layer at work
  double in_flight_micro_batches = 0;
  double buffer_bytes = 0;  // workspaces, logits, ZeRO-3 gathered layers
  double UsedBytes() const {
    return states.weight_bytes + states.grad_bytes + states.optimizer_bytes + activation_bytes +
           buffer_bytes;
  }
  bool Fits() const { return UsedBytes() <= usable_bytes; }
};

}  // namespace shardwise::train
