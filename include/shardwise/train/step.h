// The training-step model: for a layout and a TrainConfig, the time of one iteration on the
// slowest pipeline stage and its memory per GPU. Per micro-batch and layer: GEMMs at the shape-
// dependent achievable FLOP rate of the GPU catalog (backward = 2 x forward; recompute adds a
// forward), attention's score and value products (FlashAttention, or materialised scores through
// HBM), element-wise traffic at achievable HBM bandwidth, TP all-gathers and reduce-scatters
// (all-reduces without sequence parallelism), CP ring passes hidden behind attention, EP dispatch
// and combine, PP sends; then the schedule's bubble, the DP/ZeRO gradient reduce-scatter (or
// all-reduce) and parameter all-gather with the part the engine overlaps with compute, and the
// optimizer step. Collectives are priced by the collective cost model on the cluster's tree.
//
// TrainModel validates and precomputes per layout once; Estimate() is cheap and thread-safe.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "shardwise/collective/collective.h"
#include "shardwise/collective/group.h"
#include "shardwise/common/status.h"
#include "shardwise/hw/cluster.h"
#include "shardwise/layout/layout.h"
#include "shardwise/model/model_spec.h"
#include "shardwise/perf/shard.h"
#include "shardwise/train/engine.h"
#include "shardwise/train/flops.h"
#include "shardwise/train/memory.h"
#include "shardwise/train/options.h"

namespace shardwise::train {

// Time of one micro-batch through one stage, by kind.
struct PassTimes {
  double gemm_s = 0;       // weight GEMMs (FLOP-bound)
  double attention_s = 0;  // score and value products, and score traffic when materialised
  double memory_s = 0;     // element-wise kernels and logits (HBM-bound)
  double tp_comm_s = 0;
  double ep_comm_s = 0;
  double cp_comm_s = 0;  // exposed part of the ring passes
  double pp_comm_s = 0;
  double Total() const {
    return gemm_s + attention_s + memory_s + tp_comm_s + ep_comm_s + cp_comm_s + pp_comm_s;
  }
};

struct TrainEstimate {
  Layout layout;
  TrainConfig config;
  int64_t micro_batches = 0;  // per pipeline per iteration
  int slowest_stage = 0;
  PassTimes forward;      // one micro-batch on the slowest stage
  PassTimes backward;     // one micro-batch, recomputation included
  double pipeline_s = 0;  // micro_batches x (forward + backward) of the slowest stage
  double bubble_s = 0;
  double bubble_fraction = 0;
  double dp_comm_s = 0;     // DP/ZeRO collectives of one iteration
  double dp_exposed_s = 0;  // the part not hidden behind compute
  double optimizer_s = 0;
  double step_s = 0;
  double tokens_per_s = 0;
  IterationFlops flops;
  // FLOPs as Megatron-LM counts them (the layers' forward, backward and recomputed forward; its
  // eq. 3 under full recompute), per GPU per second, in TFLOP/s: Table 1's number.
  double model_tflops_per_gpu = 0;
  double mfu = 0;                      // model_tflops_per_gpu over the dtype's dense peak
  double model_flops_utilization = 0;  // PaLM's model FLOPs (recompute stripped) over peak
  TrainMemory memory;
  std::string bound;     // the largest share of the step
  std::string overhead;  // the largest share besides GEMMs: what bounds the speed
  std::string dp_link;   // where the DP group's traffic binds
  std::string tp_link;
};

// The parts of an iteration's time on the slowest stage, named for reports: GEMMs, attention,
// element-wise traffic, each communication, the bubble, exposed DP/ZeRO traffic, the optimizer.
std::vector<std::pair<std::string, double>> StepParts(const TrainEstimate& e);

// Time, GPU-hours and dollars to train on `tokens` at the estimate's speed.
struct TrainingCost {
  double tokens = 0;
  double steps = 0;
  double time_s = 0;
  double gpu_hours = 0;
  double usd = 0;
};
TrainingCost CostToTrain(const TrainEstimate& e, double usd_per_gpu_hour, double tokens);

class TrainModel {
 public:
  static StatusOr<TrainModel> Create(const ModelSpec& model, const ClusterSpec& cluster,
                                     const Layout& layout, const TrainEngine& engine);
  // Checks the config against the layout (batch divisibility, schedule, ZeRO) and estimates it.
  StatusOr<TrainEstimate> Estimate(const TrainConfig& config) const;
  const Layout& layout() const { return layout_; }

  // One micro-batch through one layer of each kind, and the stage ends. Depends only on the
  // micro-batch, sequence length, recompute mode and dtype of a config: searches compute it once
  // and pass it to Estimate for every schedule and ZeRO stage.
  struct LayerPasses;
  std::shared_ptr<const LayerPasses> Passes(const TrainConfig& c) const;
  StatusOr<TrainEstimate> Estimate(const TrainConfig& config, const LayerPasses& passes) const;

 private:
  TrainModel() = default;
  Status Check(const TrainConfig& c) const;
  double Collective(const GroupShape& g, CollectiveOp op, double bytes, int64_t topk = 1) const;
  double Gemm(double m, double n, double k, Dtype dtype) const;
  TrainMemory Memory(const TrainConfig& c, int64_t micro_batches) const;

  const ModelSpec* model_ = nullptr;
  const ClusterSpec* cluster_ = nullptr;
  const TrainEngine* engine_ = nullptr;
  Layout layout_;
  ModelShard shard_;
  GroupShape tp_group_, cp_group_, ep_group_, pp_pair_, dp_group_, edp_group_;
  double dense_params_ = 0;   // per GPU, the fullest stage: replicated over dp x cp
  double expert_params_ = 0;  // per GPU: replicated over the expert data-parallel ranks
  double dp_replicas_ = 1, edp_replicas_ = 1;
  // DP/ZeRO collectives of one iteration's gradients and parameters (config-independent).
  double grad_all_reduce_s_ = 0, grad_reduce_scatter_s_ = 0, param_all_gather_s_ = 0;
  double hbm_bytes_per_s_ = 0;
};

}  // namespace shardwise::train
