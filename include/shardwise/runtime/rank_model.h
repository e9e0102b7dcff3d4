// RankModel: one rank's shard of a transformer and its forward pass. Llama-style layers
// (RMSNorm, RoPE, GQA attention with a KV cache, SwiGLU MLP) and MoE layers (router, top-k,
// experts, optional gated shared expert), fp32. Sharding:
//   TP: Q/K/V and gate/up split by rows (heads, FFN width), O and down by columns, one
//       all-reduce after each; each rank keeps the KV heads its query heads use; the LM head
//       is split by vocabulary rows and the logits all-gathered.
//   PP: a contiguous range of layers; the caller moves activations between stages.
//   EP: experts split over the ranks of the stage's expert group (each expert's FFN over the
//       expert-TP ranks); tokens go to their experts by all-to-all and come back the same way.
//       With redundant experts an expert has several replicas (expert_placement.h) and each
//       token goes to the least-loaded one; a capacity factor drops the pairs over each expert's
//       capacity (capacity.h).
//   CP: a prefill's rows are this rank's two mirrored chunks of each prompt, attention passes
//       K/V blocks round the CP ring; decode rows are replicated over the CP group, each new
//       token's K/V is kept by one CP rank (position mod cp), and the ranks' partial softmax
//       results are merged (partial_attention.h).
// Weights are read shard by shard from a WeightSource with Hugging Face tensor names and kept
// in the run's weight storage (fp32, bf16 or int8: weight_matrix.h), except MLA's projections,
// norms, biases and routers, which stay fp32. A rank computes with a pool of `threads` threads
// that split each matrix product's weight rows and each attention's heads.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "shardwise/common/status.h"
#include "shardwise/layout/expert_placement.h"
#include "shardwise/layout/layout.h"
#include "shardwise/model/model_spec.h"
#include "shardwise/runtime/comm/communicator.h"
#include "shardwise/runtime/mla_attention.h"
#include "shardwise/runtime/partial_attention.h"
#include "shardwise/runtime/thread_pool.h"
#include "shardwise/runtime/weight_matrix.h"
#include "shardwise/runtime/weights.h"

namespace shardwise {

// Where a world rank sits in a layout (TP innermost, then CP, DP, PP).
struct RankPlacement {
  int world_rank = 0;
  int tp_index = 0;
  int cp_index = 0;
  int dp_index = 0;
  int stage = 0;
  int replica = 0;     // dp_index / attention DP
  int adp_index = 0;   // attention-DP rank inside the replica
  int stage_rank = 0;  // rank inside the replica's stage (the expert group):
                       // (adp_index x cp + cp_index) x tp + tp_index
};
RankPlacement PlaceRank(const Layout& layout, int world_rank);

// Which architectures and features the runtime executes; an error names what is missing.
Status CheckRuntimeSupport(const ModelSpec& model, const Layout& layout);

// The communicators a rank's forward pass uses.
struct RankComms {
  Communicator* tp = nullptr;     // the TP group of this stage and DP rank
  Communicator* stage = nullptr;  // the replica's stage ranks (EP group)
  Communicator* cp = nullptr;     // the CP group of this stage, DP and TP rank
};

// MoE options of a run.
struct MoeRunOptions {
  int64_t redundant_experts = 0;  // extra expert replicas per EP group (needs ep > 1)
  double capacity_factor = 0;     // > 0: drop (token, expert) pairs over capacity; 0: no limit
};

// How a rank keeps its weights and how many threads it computes with.
struct KernelOptions {
  WeightStorage weights = WeightStorage::kFp32;
  int threads = 1;
};

// (token, expert) pairs this rank routed and dropped, counted once per layer over all ranks.
struct MoeCounts {
  int64_t routed = 0, dropped = 0;
};

namespace cuda {
class HostWeights;  // the CUDA backend copies a loaded RankModel's shard to its GPU
}  // namespace cuda

// out [seqs x vocab] from every TP rank's `mine` [seqs x part] (vocabulary rows r x part on,
// the last share zero-padded), all-gathered over `tp`.
Status GatherVocabShares(const std::vector<float>& mine, int64_t seqs, int64_t part, int64_t vocab,
                         Communicator& tp, std::vector<float>& out);

class RankModel {
 public:
  static StatusOr<RankModel> Load(const ModelSpec& model, const Layout& layout,
                                  const RankPlacement& place, WeightSource& weights,
                                  int64_t sequences, int64_t cache_tokens,
                                  const MoeRunOptions& moe = {}, const KernelOptions& kernels = {});

  bool first_stage() const { return layer_begin_ == 0; }
  bool last_stage() const { return layer_end_ == model_.num_layers(); }
  int64_t hidden() const { return model_.hidden_size; }
  int64_t vocab() const { return model_.vocab_size; }
  int64_t layer_begin() const { return layer_begin_; }  // this stage's layers: [begin, end)
  int64_t layer_end() const { return layer_end_; }

  // x[t] = embedding of tokens[t] (first stage only).
  void Embed(const std::vector<int64_t>& tokens, std::vector<float>& x) const;
  // Runs this stage's layers on the rows of each sequence in `seqs` (x sequence-major), at
  // absolute `positions` (the same for every sequence), after which each sequence holds
  // `context` tokens. `split`: the rows are this CP rank's share of a prefill (the caches must
  // be empty); otherwise every CP rank holds the same rows. Appends to the KV caches.
  Status Forward(std::vector<float>& x, const std::vector<int>& seqs,
                 const std::vector<int64_t>& positions, int64_t context, bool split,
                 const RankComms& comms);
  const MoeCounts& moe_counts() const { return moe_counts_; }
  // Logits [seqs x vocab] of each sequence's last row of x (last stage only): each TP rank
  // applies its rows of the LM head and the shares are all-gathered over `tp`.
  Status Logits(const std::vector<float>& x, int64_t seqs, int64_t len, std::vector<float>& out,
                Communicator& tp) const;

 private:
  friend class cuda::HostWeights;
  struct Mlp {
    WeightMatrix gate, up, down;                       // [inter x H], [inter x H], [H x inter]
    std::vector<float> gate_bias, up_bias, down_bias;  // gpt-oss experts; empty otherwise
    int64_t inter = 0;
    float swiglu_limit = 0;  // > 0: gpt-oss's clamped SwiGLU
    // y += mlp(h) for `rows` rows.
    void Apply(const float* h, float* y, int64_t rows, int64_t hidden, ThreadPool* pool) const;
  };
  struct Layer {
    std::vector<float> input_norm, post_norm;
    WeightMatrix q, k, v, o;
    std::vector<float> q_bias, k_bias, v_bias, o_bias, q_norm, k_norm;
    std::optional<Mlp> mlp;
    int64_t window = 0;               // sliding-window layers: keys kept per query
    std::vector<float> sinks;         // [heads], gpt-oss's learned sink logits
    std::vector<float> router_bias;   // [E], gpt-oss
    std::optional<MlaAttention> mla;  // MLA models, instead of q..v_cache
    std::vector<float> router;        // [E x H], MoE layers
    std::vector<float> score_bias;    // [E], DeepSeek-V3's routing correction bias
    std::vector<Mlp> experts;         // local experts, this rank's expert-TP share
    std::optional<Mlp> shared;
    std::vector<float> shared_gate;       // [H]
    std::vector<float> k_cache, v_cache;  // [sequences][cache_tokens][kv_heads][head_dim]
  };

  Status Attention(Layer& layer, const std::vector<float>& h, std::vector<float>& out,
                   const std::vector<int>& seqs, const AttentionStep& step);
  Status Moe(const Layer& layer, const std::vector<float>& h, std::vector<float>& out,
             const std::vector<int>& seqs, const AttentionStep& step, const RankComms& c);
  // For each local expert slot, the rows of `in` (`stride` floats apart, hidden values at
  // offset `at`) routed to it, through its MLP at once: out rows += weight x expert(in row).
  struct ExpertRow {
    int64_t row = 0;
    float weight = 0;
  };
  void ApplyExperts(const Layer& layer, const std::vector<std::vector<ExpertRow>>& by_slot,
                    const float* in, float* out, int64_t stride, int64_t at) const;

  ModelSpec model_;
  Layout layout_;
  RankPlacement place_;
  int64_t layer_begin_ = 0, layer_end_ = 0;
  int64_t head_begin_ = 0, heads_ = 0, kv_begin_ = 0, kv_heads_ = 0;
  ExpertPlacement placement_;  // MoE models: experts (and replicas) per EP rank
  int64_t ep_index_ = 0;       // this rank's EP rank in its expert group
  MoeRunOptions moe_options_;
  MoeCounts moe_counts_;
  int64_t cache_tokens_ = 0;
  std::vector<std::vector<int64_t>> cached_;  // per sequence: positions of the local cache slots
  std::vector<Layer> layers_;
  WeightMatrix embed_;
  std::vector<float> final_norm_;
  WeightMatrix lm_head_;  // this TP rank's vocabulary rows, zero-padded to lm_head_rows_
  int64_t lm_head_rows_ = 0;
  std::unique_ptr<ThreadPool> pool_;
};

}  // namespace shardwise
