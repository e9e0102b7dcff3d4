// The training-step model: for a layout and a TrainConfig, the time of one iteration on the
// slowest pipeline rank and its memory per GPU. Layers are spread over the pipeline's model
// chunks as Megatron-Core spreads them (pipeline_split.h: uneven first and last stages, the
// embedding and loss counted as layers, interleaving that does not divide the layers evenly).
// Each rank's micro-batch is the sum of its chunks' layers (layer_costs.h); the host issues the
// kernels ahead of the GPU, so a rank takes the longer of its GPU time and its host time, per
// forward layer where dropless MoE makes the host wait. Then the schedule's bubble, the DP/ZeRO
// gradient reduce-scatter (or all-reduce) and parameter all-gather with the part the engine
// overlaps with compute, and the optimizer step. Collectives are priced by the collective cost
// model on the cluster's tree.
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
#include "shardwise/train/layer_costs.h"
#include "shardwise/train/memory.h"
#include "shardwise/train/options.h"
#include "shardwise/train/pipeline_split.h"

namespace shardwise::train {

struct TrainEstimate {
  Layout layout;
  TrainConfig config;
  PipelineSplit split;
  int64_t micro_batches = 0;  // per pipeline per iteration
  int slowest_stage = 0;      // pipeline rank
  PassTimes forward;          // one micro-batch on the slowest rank
  PassTimes backward;         // one micro-batch, recomputation included
  double host_exposed_s = 0;  // per micro-batch: where the host, not the GPU, set the pace
  double pipeline_s = 0;      // micro_batches x (forward + backward + host) of the slowest rank
  double bubble_s = 0;
  double bubble_fraction = 0;  // bubble_s / pipeline_s: Megatron-LM's (p - 1) / m under 1F1B
  double dp_comm_s = 0;        // DP/ZeRO collectives of one iteration
  double dp_exposed_s = 0;     // the part not hidden behind compute
  double optimizer_s = 0;      // Adam step and FP8 weight casts
  double step_s = 0;
  double tokens_per_s = 0;
  double tokens_per_s_per_gpu = 0;
  IterationFlops flops;
  // FLOPs per GPU per second, in TFLOP/s: model FLOPs (PaLM: three passes, no recompute) and
  // hardware FLOPs (what runs, recomputation included, counted as Megatron-LM counts: its eq. 3
  // under full recompute, Table 1's number).
  double model_tflops_per_gpu = 0;
  double hardware_tflops_per_gpu = 0;
  double mfu = 0;  // model FLOPs over the GEMM format's dense peak (PaLM's MFU)
  double hfu = 0;  // hardware FLOPs over the same peak
  TrainMemory memory;
  std::string bound;     // the largest share of the step
  std::string overhead;  // the largest share besides GEMMs: what bounds the speed
  std::string dp_link;   // where the DP group's traffic binds
  std::string tp_link;
};

// The parts of an iteration's time on the slowest rank, named for reports: GEMMs, attention,
// element-wise traffic, kernel gaps, host launches, each communication, the bubble, exposed
// DP/ZeRO traffic, the optimizer.
std::vector<std::pair<std::string, double>> StepParts(const TrainEstimate& e);

class TrainModel {
 public:
  // Whether the training model covers `model`'s layers: linear-attention and SSM layers (their
  // chunked scans forward and backward) are not modelled yet and are refused.
  static Status Supports(const ModelSpec& model);
  static StatusOr<TrainModel> Create(const ModelSpec& model, const ClusterSpec& cluster,
                                     const Layout& layout, const TrainEngine& engine);
  // Checks the config against the layout (batch divisibility, schedule, split, ZeRO, format) and
  // estimates it.
  StatusOr<TrainEstimate> Estimate(const TrainConfig& config) const;
  const Layout& layout() const { return layout_; }

  // One micro-batch through one layer of each kind and the pipeline's ends. Depends only on the
  // micro-batch, sequence length, recompute mode and precision of a config: searches compute it
  // once and pass it to Estimate for every schedule and ZeRO stage.
  std::shared_ptr<const LayerCosts> Passes(const TrainConfig& c) const;
  StatusOr<TrainEstimate> Estimate(const TrainConfig& config, const LayerCosts& passes) const;

 private:
  struct RankParams {
    double dense = 0;   // replicated over dp x cp
    double expert = 0;  // replicated over the expert data-parallel ranks
  };

  TrainModel() = default;
  Status Check(const TrainConfig& c) const;
  double Collective(const GroupShape& g, CollectiveOp op, double bytes, int64_t topk = 1) const;
  RankParams ParamsOf(const std::vector<PipelineChunk>& chunks) const;
  // One rank's micro-batch: forward and backward GPU times and the time the host lets it take.
  double RankTime(const std::vector<PipelineChunk>& chunks, const LayerCosts& p,
                  const TrainConfig& c, PassTimes& fwd, PassTimes& bwd) const;
  void DataParallel(const TrainConfig& c, const RankParams& params, TrainEstimate& est) const;
  TrainMemory Memory(const TrainConfig& c, const PipelineSplit& split, int64_t micro_batches) const;
  // One EP dispatch (or combine) of `tokens` hidden states from this GPU; `padded`: experts'
  // inputs padded to capacity (token drop), which only the all-to-all dispatcher runs.
  double Dispatch(double tokens, bool padded) const;

  const ModelSpec* model_ = nullptr;
  const ClusterSpec* cluster_ = nullptr;
  const TrainEngine* engine_ = nullptr;
  TrainGpuRates rates_;
  Layout layout_;
  ModelShard shard_;
  GroupShape tp_group_, cp_group_, ep_group_, pp_pair_, dp_group_, edp_group_;
  // The EP group's part inside one NVLink domain, and one GPU per node it spans.
  GroupShape ep_local_group_, ep_node_group_;
  double dp_replicas_ = 1, edp_replicas_ = 1;
  double hbm_bytes_per_s_ = 0;
};

}  // namespace shardwise::train
