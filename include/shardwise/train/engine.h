// TrainEngine: how a training framework runs a step, as far as time and memory depend on it:
// which attention kernel (materialised scores or FlashAttention), whether TP uses sequence
// parallelism, dropout, the element-wise traffic of its fused kernels, gradient and optimizer
// formats, what communication it overlaps, which schedules and ZeRO stages it offers, and its
// memory reserve. Read from data/training/*.json (or a user file of the same form); every number
// has its source and whether it was measured, derived or assumed. Plain value type.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "shardwise/common/status.h"
#include "shardwise/train/options.h"

namespace shardwise::train {

struct TrainEngine {
  std::string name;
  std::string description;
  bool flash_attention = true;    // scores stay on chip; else S and P go through HBM
  double attention_fraction = 1;  // attention-core FLOP rate over the large-GEMM rate
  bool sequence_parallel = true;  // TP splits norms and dropout over the sequence
  bool dropout = false;           // dropout masks stored for the backward pass
  // Forward HBM traffic of the element-wise kernels per token and layer, in hidden-sized
  // tensors read or written (norms, bias-dropout-residual), and per attention score.
  double hidden_tensors = 0;
  double score_tensors = 0;
  double backward_traffic_factor = 2;    // backward element-wise traffic over forward
  double grad_bytes_per_param = 2;       // gradient buffer (and its reduction) format
  double optimizer_bytes_per_param = 0;  // HBM traffic of the Adam step per parameter
  bool overlap_grad_reduce = false;      // gradient reduction hides behind the last backward
  bool overlap_param_gather = false;     // ZeRO parameter all-gather hides behind forward
  std::vector<ScheduleKind> schedules;
  std::vector<int> zero_stages;
  double workspace_bytes = 0;      // cuBLAS/NCCL workspaces and the CUDA context
  double usable_hbm_fraction = 1;  // of HBM, after allocator fragmentation
  std::map<std::string, std::string> sources;

  bool Offers(ScheduleKind kind) const;
  bool OffersZero(int stage) const;
};

StatusOr<TrainEngine> ParseTrainEngine(const nlohmann::json& json, const std::string& source);

std::vector<std::string> BuiltinTrainEngineNames();
// A built-in engine by name or an engine file by path; unknown names suggest the nearest.
StatusOr<TrainEngine> LoadTrainEngine(std::string_view name_or_path);

}  // namespace shardwise::train
