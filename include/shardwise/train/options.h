// What a training run asks for besides model, cluster and layout: sequence length, global and
// micro-batch, pipeline schedule and split, ZeRO stage, activation recomputation, the compute
// format and its FP8 scaling recipe, how MoE layers route tokens, and multi-token prediction.
// Plain value types with parsers for their command-line spellings.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "shardwise/common/status.h"
#include "shardwise/model/dtype.h"
#include "shardwise/train/pipeline_split.h"

namespace shardwise::train {

enum class ScheduleKind {
  k1F1B,         // one forward, one backward (PipeDream-Flush / Megatron's default)
  kInterleaved,  // Megatron's interleaved 1F1B over `virtual_stages` model chunks per GPU
  kZeroBubble,   // zero-bubble schedule (Qi et al., ICLR 2024, ZB-V; DualPipe-like)
};

struct Schedule {
  ScheduleKind kind = ScheduleKind::k1F1B;
  int64_t virtual_stages = 1;  // model chunks per GPU (interleaved only)

  std::string ToString() const;  // "1f1b", "interleaved:2", "zero-bubble"
  bool operator==(const Schedule&) const = default;
};

// "1f1b", "interleaved:V" (V >= 2), "zero-bubble".
StatusOr<Schedule> ParseSchedule(std::string_view text);

enum class Recompute {
  kNone,       // keep every activation the backward pass needs
  kSelective,  // recompute the attention core (scores, softmax, dropout) only
  kFull,       // keep each layer's input; recompute the whole layer in the backward pass
};

std::string_view RecomputeName(Recompute r);

// How FP8 GEMM operands are scaled (Transformer Engine's recipes, as Megatron-Core's --fp8-recipe
// names them): one scale per tensor from the amax history (delayed) or from the tensor itself
// (current, NVIDIA's "FP8-CS"); one per 128 x 128 weight block and 1 x 128 activation tile
// (blockwise, DeepSeek-V3's recipe); one 8-bit exponent per 32 elements (mxfp8, "FP8-MX",
// Blackwell's block-scaled tensor cores).
enum class Fp8Recipe { kDelayed, kCurrent, kBlockwise, kMxfp8 };

std::string_view Fp8RecipeName(Fp8Recipe r);
StatusOr<Fp8Recipe> ParseFp8Recipe(std::string_view text);

struct TrainConfig {
  int64_t seq_len = 2048;      // tokens per sequence
  int64_t global_batch = 512;  // sequences per iteration
  int64_t micro_batch = 1;     // sequences per micro-batch per data-parallel rank
  Schedule schedule;
  PipelineSplitRequest split;  // how layers are spread over the pipeline's model chunks
  int zero = 0;                // ZeRO stage 0-3 (3 = FSDP)
  Recompute recompute = Recompute::kFull;
  // Under full recompute, the first N layers of each model chunk are recomputed and the rest keep
  // their activations (Megatron's --recompute-method block --recompute-num-layers N); 0: all.
  int64_t recompute_layers = 0;
  Dtype dtype = Dtype::kBf16;  // GEMM format (bf16 or fp8); weights and activations are bf16
  Fp8Recipe fp8_recipe = Fp8Recipe::kCurrent;  // with dtype fp8
  // MoE: drop tokens beyond each expert's capacity and pad every expert to it (static shapes, no
  // host sync) instead of Megatron-Core's dropless default.
  bool moe_token_drop = false;
  int64_t mtp_layers = 0;  // multi-token-prediction modules after the last layer (DeepSeek-V3)

  int64_t TokensPerIteration() const { return seq_len * global_batch; }
  // "none", "selective", "full" or "full:N".
  std::string RecomputeText() const;
  // The mode of the layer at `index` of its model chunk: kFull for a recomputed layer, else what
  // the other layers keep (kNone beside block recompute).
  Recompute LayerRecompute(int64_t index) const {
    if (recompute != Recompute::kFull) return recompute;
    return recompute_layers == 0 || index < recompute_layers ? Recompute::kFull : Recompute::kNone;
  }
  // "bf16", "fp8-current", "fp8-mxfp8", ...
  std::string PrecisionName() const;
  // An MoE model's routing: kDropless or kTokenDrop.
  static constexpr std::string_view kDropless = "dropless", kTokenDrop = "token-drop";
  std::string_view MoeRoutingName() const { return moe_token_drop ? kTokenDrop : kDropless; }
};

// Parses --recompute: none, selective, full or full:N (N layers per model chunk) into `config`.
Status ParseRecompute(std::string_view text, TrainConfig& config);

}  // namespace shardwise::train
