// The step-time model: for a layout and a workload, the time of a prefill and of a decode step
// on the critical path, composed from ops (GEMMs, attention by kind, MoE experts, element-wise;
// ops.h, attention.h, moe.h), communication (TP all-reduce, EP dispatch and combine, CP passes,
// PP send/recv; comm.h) and a schedule (pipeline micro-batches; schedule.h); from those TTFT,
// TPOT and throughput. Communication is not overlapped except CP's ring passes, which hide
// behind attention, and the EP exchange under two-batch overlap (overlap.h).
//
// StepModel validates and precomputes per layout once; Estimate() is cheap and thread-safe.
#pragma once

#include <memory>
#include <string>

#include "shardwise/common/status.h"
#include "shardwise/hw/cluster.h"
#include "shardwise/layout/layout.h"
#include "shardwise/model/model_spec.h"
#include "shardwise/perf/breakdown.h"
#include "shardwise/perf/comm.h"
#include "shardwise/perf/launch.h"
#include "shardwise/perf/memory.h"
#include "shardwise/perf/ops.h"
#include "shardwise/perf/options.h"
#include "shardwise/perf/overlap.h"
#include "shardwise/perf/schedule.h"
#include "shardwise/perf/shard.h"

namespace shardwise {

struct StepEstimate {
  Layout layout;
  Workload workload;
  PhaseBreakdown prefill;  // one prompt, unloaded: TTFT
  PhaseBreakdown decode;   // one token for every sequence of the batch: TPOT
  double ttft_s = 0;
  double tpot_s = 0;
  double prefill_s_per_request = 0;  // instance time one prompt costs at full load
  double output_tokens_per_s = 0;    // all replicas, offline steady state
  double output_tokens_per_s_per_gpu = 0;
  double output_tokens_per_s_per_user = 0;
  // Speculative decoding: tokens one decode step yields per sequence (1 without it), and the
  // draft's share of the step (decode.total_s is the whole step; tpot_s = step / tokens).
  double tokens_per_step = 1;
  // With a capacity factor: the share of (token, expert) pairs the busiest EP rank drops in
  // decode (0 without one).
  double expert_dropped_share = 0;
  double draft_s = 0;
  MemoryPerGpu memory;
  std::string bound;               // what limits decode: "HBM bandwidth", "FLOP/s", ...
  double tp_comm_per_layer_s = 0;  // decode, one layer
  double compute_per_layer_s = 0;  // decode, one layer: GEMM + attention time
  bool over_parallelised =
      false;  // TP comm per layer exceeds compute per layer (7 Scaling Across Hardware)
};

// The batch-independent part of an estimate: prefill of one prompt length.
struct PrefillEstimate {
  int64_t prompt_tokens = 0;
  PhaseBreakdown prefill;  // one prompt, unloaded
  double ttft_s = 0;
  double s_per_request = 0;  // instance time one prompt costs at full load
};

class StepModel {
 public:
  static StatusOr<StepModel> Create(const ModelSpec& model, const ClusterSpec& cluster,
                                    const Layout& layout, const PerfOptions& options);
  StepEstimate Estimate(const Workload& workload) const;
  // Prefill depends only on the prompt length: callers that sweep batches or contexts compute
  // it once and pass it in.
  PrefillEstimate EstimatePrefill(int64_t prompt_tokens) const;
  StepEstimate Estimate(const Workload& workload, const PrefillEstimate& prefill) const;
  // The prefill share of one serving iteration: `tokens` prompt tokens on the busiest
  // attention-DP rank (every rank is assumed as busy for the experts), whose queries attend on
  // average to `keys_per_token` keys (a chunk sees the prefix already in the cache plus its own
  // earlier tokens, so several short prompts packed together attend far less than one long one). A
  // pipeline keeps its stages busy with several batches in flight (vLLM's virtual engines,
  // TensorRT-LLM's micro-batches): the tokens pass as up to pp micro-batches, and the slowest stage
  // serves them all.
  double PrefillIterationS(double tokens, double keys_per_token) const;
  // One iteration of a pipeline's virtual engine, as vLLM's virtual engines and TensorRT-LLM's
  // micro-batches in flight run a pipeline: the iteration's `batch` decoding sequences (at KV
  // length `context`), or its `tokens` prompt tokens, pass every stage as one micro-batch, so a
  // prompt's first token waits for all of them (the TTFT explain gives), while up to pp such
  // iterations share the stages. Without a pipeline these are the decode step and
  // PrefillIterationS.
  // VirtualPrefillS leaves out the host's floor of an iteration outside CUDA graphs, which holds
  // for the whole iteration, decodes included: PromptIterationFloorS.
  double VirtualDecodeS(double batch, double context) const;
  double VirtualPrefillS(double tokens, double keys_per_token) const;
  // The shortest one pass of an iteration carrying prompt tokens takes: the engine's per-step
  // time and the host's work outside CUDA graphs (kernel launches, per-layer framework work).
  double PromptIterationFloorS() const;
  // Tokens per attention rank up to which an iteration carrying prompt tokens replays a CUDA
  // graph and pays no such floor (EngineProfile::cuda_graph_prompts; 0 where none does).
  double PromptGraphTokens() const;
  bool PromptGraphed(double tokens_per_rank) const;
  const ModelShard& shard() const { return shard_; }
  const Layout& layout() const { return layout_; }
  // Display name of the link a group's traffic binds on ("nvlink", "scale-out", ...).
  std::string TpLink() const { return comm_.tp_link(); }
  std::string EpLink() const { return comm_.ep_link(); }

 private:
  StepModel() = default;

  // One stage's time for `tokens` per attention rank; `keys(window)` is the query-key pairs
  // attention computes per layer; `ep_tokens` the tokens entering each expert group. Decode
  // passes `queries_per_sequence` tokens of each sequence (k + 1 when verifying k draft
  // tokens), which read the sequence's KV once.
  // With two-batch overlap the stage runs as two micro-batches of half the tokens (overlap.h).
  template <typename Keys>
  PhaseBreakdown Stage(const StageLayers& stage, double tokens, Keys keys, double ep_tokens,
                       bool prefill, double prefill_tokens, double queries_per_sequence = 1.0,
                       double cached_tokens = 0.0) const;
  // One pass of `tokens` over the stage; fills `pass` with its MoE layers' work and exchange.
  template <typename Keys>
  PhaseBreakdown StageWork(const StageLayers& stage, double tokens, Keys keys, double ep_tokens,
                           bool prefill, double prefill_tokens, double queries_per_sequence,
                           double cached_tokens, MicroBatchPass& pass) const;
  // The stage's MoE layers (alike: one priced, times their count) into `out`: router, shared
  // and routed experts, the EP exchange or the gather; `pass` gets their share for two-batch
  // overlap. `mixers_s` is the stage's token-mixer time so far.
  void MoeLayers(const StageLayers& stage, double tokens, double ep_tokens, bool prefill,
                 double tp_all_reduce_s, double mixers_s, PhaseBreakdown& out,
                 MicroBatchPass& pass) const;
  // The draft's pass over `tokens` prompt tokens (each attending to `keys_per_token` keys) of
  // prompts of `prompt_tokens`: zero without speculative decoding.
  PhaseBreakdown DraftPrefill(double tokens, double keys_per_token, double prompt_tokens) const;
  // The draft's k passes for `sequences` per attention rank at KV length `context`.
  PhaseBreakdown DraftPasses(double sequences, double context) const;
  DraftMemory DraftMemoryPerGpu(const Workload& workload) const;
  double HandOff(double tokens) const;  // PP send/recv of `tokens` activations
  // The decode step of `w`'s batch passed through the stages as `mb`: fills e.decode, e.tpot_s,
  // the draft and the per-layer figures.
  void DecodeStep(const Workload& w, const MicroBatches& mb, StepEstimate& e) const;
  // A prefill iteration of `tokens` passed through the stages as `mb`.
  // With `host_floor`, the host's time outside CUDA graphs binds where the GPU's is shorter.
  double PrefillPassS(double tokens, double keys_per_token, const MicroBatches& mb,
                      bool host_floor = true) const;
  // Host time of an iteration whose stages take `gpu_s` each for `passes` passes: the engine's
  // per-step time, plus what the host needs outside a CUDA graph (kernel launches, and the
  // per-layer work of an iteration that carries prompt tokens) that the GPU does not hide.
  double StepOverheadS(bool graphed, double passes, double gpu_s, bool carries_prompt) const;

  // The model with its shared experts placed as routed (PerfOptions::shared_experts_routed),
  // which model_ then points to; else null.
  std::shared_ptr<const ModelSpec> derived_model_;
  const ModelSpec* model_ = nullptr;
  const ClusterSpec* cluster_ = nullptr;
  PerfOptions options_;
  Layout layout_;
  ModelShard shard_;
  OpCoster ops_;
  LaunchSetup launch_;
  // Host time outside CUDA graphs of the slowest stage's pass: decode only, and carrying prompts.
  double max_stage_decode_host_s_ = 0;
  double max_stage_prompt_host_s_ = 0;
  StepComm comm_;
  StageLayers draft_layers_;                // MTP module or EAGLE head
  std::shared_ptr<const StepModel> draft_;  // a draft model, on the target's TP ranks
  PrefillEstimate draft_prefill_;           // unused by its decode; computed once
};

}  // namespace shardwise
