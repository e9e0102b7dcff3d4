// Train: plan, explain and price a pre-training or fine-tuning run (train/planner.h). Without a
// layout it searches and ranks layouts (micro-batch, schedule, ZeRO stage and recompute searched
// unless given); with one it explains that layout. The request's fields are checked by name.
// Pure; thread-safe.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "shardwise/api/catalog.h"
#include "shardwise/common/status.h"
#include "shardwise/train/engine.h"
#include "shardwise/train/planner.h"

namespace shardwise::api {

struct TrainRunRequest {
  std::string model = "llama-3.1-8b";
  ClusterRef cluster;
  std::string engine = "megatron-core";  // data/training
  std::string layout;                    // empty: search
  int64_t seq_len = 4096;
  int64_t global_batch = 512;
  std::optional<int64_t> micro_batch;  // unset: searched (and schedule, zero, recompute alike)
  std::string schedule;
  std::string pipeline_layout;  // Megatron's --pipeline-model-parallel-layout
  std::optional<int64_t> first_stage_layers;
  std::optional<int64_t> last_stage_layers;
  std::optional<int> zero;
  std::string recompute;
  double tokens = 300e9;  // to train on, for time and cost
  std::string dtype = "bf16";
  std::string fp8_recipe = "current";
  bool moe_token_drop = false;
  int64_t mtp_layers = 0;
  std::optional<double> interruption_rate;  // per GPU-hour; unset: the engine's
  std::optional<double> restart_s;          // unset: the engine's
  int top = 5;
  bool no_sizes = false;  // skip the time-versus-cost search at smaller cluster sizes
};

// The spread of the engine's published runs applied to the winner: its tokens/s per GPU and its
// wall clock for the tokens at the 10th and 90th percentile of measured / predicted.
struct MeasuredBand {
  train::MeasuredSpread spread;
  bool on_this_gpu = false;                   // whether any of those runs was on the cluster's GPU
  double predicted_tokens_per_s_per_gpu = 0;  // the winner's, which the ratios scale
  double tokens_per_s_per_gpu_low = 0, tokens_per_s_per_gpu_high = 0;
  double time_s_low = 0, time_s_high = 0;
  // The model's own published runs: on the cluster's GPU where there are any, else on every GPU
  // they ran on; empty where the profile states none for the model.
  std::vector<train::ModelGpuSpread> this_model;
};

struct TrainReport {
  ModelSpec model;
  ClusterSpec cluster;
  train::TrainEngine engine;
  train::TrainRequest request;
  train::TrainPlan plan;
  std::string cluster_note;  // a profile fitted on another cluster, for the user
  // Where neither the engine nor the GPU catalog measured or fitted this GPU's rates: says so.
  std::string calibration_note;
  // What the prediction leaves out of the model (a vision tower, MTP layers, DSA's sparse stage).
  std::vector<std::string> model_notes;
  // None where the engine states no spread, or no measurement stands behind the GPU at all.
  std::optional<MeasuredBand> band;
  double elapsed_s = 0;  // the search's wall time
};

StatusOr<TrainReport> Train(const Catalog& catalog, const TrainRunRequest& request);

nlohmann::json ToJson(const TrainReport& report);

}  // namespace shardwise::api
