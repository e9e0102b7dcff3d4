// What a training run asks for besides model, cluster and layout: sequence length, global and
// micro-batch, pipeline schedule, ZeRO stage, activation recomputation and the compute format.
// Plain value types with parsers for their command-line spellings.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "shardwise/common/status.h"
#include "shardwise/model/dtype.h"

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
StatusOr<Recompute> ParseRecompute(std::string_view text);

struct TrainConfig {
  int64_t seq_len = 2048;      // tokens per sequence
  int64_t global_batch = 512;  // sequences per iteration
  int64_t micro_batch = 1;     // sequences per micro-batch per data-parallel rank
  Schedule schedule;
  int zero = 0;  // ZeRO stage 0-3 (3 = FSDP)
  Recompute recompute = Recompute::kFull;
  Dtype dtype = Dtype::kBf16;  // GEMM format (bf16 or fp8); weights and activations are bf16

  int64_t TokensPerIteration() const { return seq_len * global_batch; }
};

}  // namespace shardwise::train
