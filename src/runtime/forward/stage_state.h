// StageForward's state and the blocks of its forward pass (private to runtime/forward):
// stage_forward.cc runs the layers, attention_block.cc the attention of both kinds (GQA and MLA,
// CP ring and merge), moe_block.cc the MoE layers, logits.cc the LM head.
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <vector>

#include "shardwise/runtime/forward/stage_forward.h"
#include "stage_weights.h"

namespace shardwise {

// Backend tensors reused across steps, each grown when a step needs more: no allocation per
// token once the largest step (the prefill) has run.
enum class Scratch {
  kX,
  kY,
  kNormed,
  kNormedF32,
  kQkv,
  kQ,
  kPartial,
  kAttn,
  kGateUp,
  kAct,
  kMlpOut,
  kQLora,
  kQLoraNormed,
  kKv,
  kQAbsorbed,
  kLatentOut,
  kMlaKeys,
  kMlaValues,
  kRingKeys,
  kRingValues,
  kRouterLogits,
  kLogits,
  kGathered,
  kExpertOut,
  kReceived,
  kReceivedIn,
  kReply,
  kLastRows,
  kLastNormed,
  kCount
};

class ScratchTensors {
 public:
  // The tensor for `slot` of `kind` with at least rows x cols elements (its shape may differ).
  StatusOr<Tensor*> Get(Kernels& k, Scratch slot, TensorKind kind, int64_t rows, int64_t cols);
  // How many times a tensor was (re)allocated: a recorded graph holds the old addresses.
  int64_t generation() const { return generation_; }

 private:
  std::array<TensorPtr, static_cast<size_t>(Scratch::kCount)> t_;
  int64_t generation_ = 0;
};

struct StageState {
  ModelSpec model;
  Layout layout;
  RankShard shard;
  ExpertPlacement placement;
  MoeRunOptions moe_options;
  MoeCounts moe_counts;
  std::vector<float> router_margins;  // per local sequence
  int64_t cache_tokens = 0, sequences = 0;
  std::unique_ptr<Kernels> kernels;
  StageWeights weights;
  Tensor* x = nullptr;  // the current rows' hidden states [rows x hidden] (kX), kFloat
  int64_t x_rows = 0;
  std::vector<std::vector<int64_t>> cached;  // per sequence: positions of the local cache slots
  StepRows step;
  bool split = false;  // this step's rows are split over the CP group (ring attention)
  ScratchTensors scratch;
  std::vector<float> staging;  // host copies for collectives on device-resident tensors
  std::vector<int64_t> gqa_kv_head, mla_heads;  // attention's head maps, reused per layer
  int64_t logit_rows = 0;                       // rows of the last Sample
  std::vector<int64_t> graph_seen;              // decode-step graph keys issued once

  Kernels& k() { return *kernels; }
  StatusOr<Tensor*> Get(Scratch slot, TensorKind kind, int64_t rows, int64_t cols) {
    return scratch.Get(*kernels, slot, kind, rows, cols);
  }
};

// t's first n elements summed over `comm` (through the host).
Status AllReduce(StageState& s, Communicator& comm, Tensor& t, int64_t n);
// t's first n elements on the host: the backend's own memory, or a download into `staging`.
StatusOr<float*> HostView(StageState& s, const Tensor& t, int64_t n, std::vector<float>& staging);
// Writes `view` back to t when HostView staged it.
Status CommitView(StageState& s, Tensor& t, const float* view, int64_t n);

// y [rows x hidden] = this rank's attention share for the step's rows, summed over TP.
Status AttentionBlock(StageState& s, const LayerWeights& L, const Tensor& normed, Tensor& y,
                      const RankComms& comms);
// y [rows x hidden] = the MoE block's output (shared and routed experts), summed over TP.
Status MoeBlock(StageState& s, const MoeWeights& moe, const Tensor& normed,
                const Tensor& normed_f32, Tensor& y, const RankComms& comms);
// out [rows x hidden] = mlp(x) for this rank's FFN columns.
Status ApplyMlp(StageState& s, const MlpWeights& w, const Tensor& x, int64_t rows, Tensor& out);

}  // namespace shardwise
