// FLOPs of a training iteration as the papers count them. Forward FLOPs per token are the
// matmuls (2 x matmul parameters, LM head included) plus attention's score and value products
// over the whole sequence, uncausal, as Megatron-LM and PaLM count them. Megatron-LM's count
// (arXiv:2104.04473, eq. 3: 96 B s l h^2 (1 + s/6h + V/16lh)) is four passes of the layers
// (forward, backward = 2 x forward, and the recomputed forward) and three of the LM head; PaLM's
// model FLOPs (6N + attention) are three passes of everything.
// Pure functions; thread-safe.
#pragma once

#include "shardwise/model/model_spec.h"
#include "shardwise/train/options.h"

namespace shardwise::train {

struct IterationFlops {
  double forward = 0;            // one forward pass over the global batch
  double attention_forward = 0;  // its attention score and value products
  double megatron = 0;           // Megatron-LM's eq. 3: full recompute's count
  double model = 0;              // 3 x forward: PaLM's model FLOPs (MFU without recompute)
  // What the GPUs execute under the config's recompute mode, counted as Megatron-LM counts (equal
  // to `megatron` under full recompute, `model` without recompute).
  double hardware = 0;
};

// Forward FLOPs of one token in a sequence of `seq_len` (sliding-window layers see the window).
double ForwardFlopsPerToken(const ModelSpec& model, int64_t seq_len);

// `recomputed_fraction`: the share of layers a full-recompute config recomputes (1 unless it
// recomputes only some layers of each model chunk). `scores_materialised`: whether selective
// recompute reruns the attention scores' forward as the step model times it (layer_costs.h:
// only where the scores are materialised; with FlashAttention, none), so that HFU counts what
// the step's time holds. Whether Megatron-Core's selective recompute reruns a fused attention
// kernel anyway is not checked against its source here.
IterationFlops CountIterationFlops(const ModelSpec& model, const TrainConfig& config,
                                   double recomputed_fraction = 1, bool scores_materialised = true);

}  // namespace shardwise::train
