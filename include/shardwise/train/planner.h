// The training planner: every valid layout of a cluster (TP, CP, PP, DP, EP degrees), micro-batch
// size and count, schedule, ZeRO stage and recompute mode, estimated with TrainModel; what does
// not fit is dropped; the rest ranked by step time (time to train a token budget; on a fixed
// cluster also its cost), with one line on why the winner wins and what bounds it. Also the
// critical batch sizes of "How to Think About GPUs" for this cluster, and the best layout at each
// cluster size (powers of two of nodes) with the Pareto front of time versus cost.
// Pure functions; thread-compatible.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "shardwise/common/status.h"
#include "shardwise/hw/cluster.h"
#include "shardwise/layout/layout.h"
#include "shardwise/model/model_spec.h"
#include "shardwise/train/engine.h"
#include "shardwise/train/goodput.h"
#include "shardwise/train/step.h"

namespace shardwise::train {

struct TrainRequest {
  TrainConfig config;  // seq_len, global_batch and dtype always apply
  bool search_micro_batch = true;
  bool search_schedule = true;
  bool search_zero = true;
  bool search_recompute = true;
  std::optional<Layout> only_layout;
  int top = 5;
  double tokens = 300e9;    // training budget for time, GPU-hours and dollars
  Reliability reliability;  // interruptions and checkpoints (the engine's unless overridden)
  bool sizes = true;        // also the best layout per cluster size (Pareto of time vs cost)
};

// Critical batch sizes ("How to Think About GPUs", LLM rooflines): DP/FSDP stays compute-bound
// while each data-parallel rank gets more than C / W tokens (times E / k for MoE), W the per-GPU
// bandwidth of the level the DP group spans; TP stays compute-bound while tp < F W / C.
struct CriticalBatch {
  double tokens_per_gpu_intra = 0;  // C / W inside an NVLink domain
  double tokens_per_gpu_inter = 0;  // C / W across nodes (node egress)
  double pure_dp_tokens = 0;        // global batch pure DP over the whole cluster would need
  double layout_tokens = 0;         // global batch the chosen layout's DP degree needs
  double batch_tokens = 0;          // the global batch asked for
  double max_tp_intra = 0;
  double max_tp_inter = 0;
};

CriticalBatch ComputeCriticalBatch(const ModelSpec& model, const ClusterSpec& cluster,
                                   const TrainEstimate& e);

struct TrainPlanEntry {
  TrainEstimate estimate;
  TrainingCost cost;
  std::string why;  // one line: why it ranks here and what bounds it
};

struct SizePoint {
  int64_t gpus = 0;
  TrainPlanEntry best;
  bool pareto = false;  // no other size is both faster and cheaper
};

struct TrainPlan {
  std::vector<TrainPlanEntry> ranked;  // best config per layout, fastest first
  int64_t layouts_considered = 0;
  int64_t configs_evaluated = 0;
  int64_t configs_fitting = 0;
  CriticalBatch critical;        // for the winner
  std::vector<SizePoint> sizes;  // ascending GPUs
};

StatusOr<TrainPlan> PlanTraining(const ModelSpec& model, const ClusterSpec& cluster,
                                 const TrainEngine& engine, const TrainRequest& request);

}  // namespace shardwise::train
