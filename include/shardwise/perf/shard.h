// ModelShard: what one GPU holds and computes under a layout, per layer kind, for each
// pipeline stage. Attention heads and dense FFNs split over TP; KV heads split over TP and
// replicated when TP exceeds them (an MLA latent cache is replicated on every TP rank);
// experts split over EP and each expert's FFN over the expert-TP ranks; embeddings and LM head
// split over TP by vocabulary. Value type.
#pragma once

#include <cstdint>
#include <vector>

#include "shardwise/layout/layout.h"
#include "shardwise/model/model_spec.h"
#include "shardwise/perf/options.h"

namespace shardwise {

struct StageLayers {
  int64_t dense = 0;              // dense-FFN layers in the stage
  int64_t moe = 0;                // MoE layers in the stage
  int64_t no_ffn = 0;             // layers without a feed-forward part (hybrid mixer-only blocks)
  std::vector<MixerKind> mixers;  // token mixer per layer
  std::vector<int64_t> windows;   // sliding window per layer (0 = full; attention layers)
  bool first = false;             // holds the embedding
  bool last = false;              // holds the LM head
};

// One weight matrix on one GPU: [k x n] (k inputs, n outputs).
struct GemmShape {
  double n = 0;
  double k = 0;
  double weight_bytes_per_param = 0;  // 0: PerfOptions::weight_dtype's storage cost
};

struct ModelShard {
  Layout layout;
  std::vector<StageLayers> stages;  // contiguous layer ranges, stage 0 first
  // Per GPU, per layer:
  double attention_params = 0;
  double dense_ffn_params = 0;
  double norm_params = 0;
  double expert_params = 0;    // one routed expert's share on one GPU
  double experts_per_gpu = 0;  // routed expert slots on one GPU, redundant copies too
  // The busiest EP rank's share of the routed load over the mean, from the expert placement
  // (redundant copies, routing skew); 1 when it spreads evenly (moe.h).
  double expert_placement_imbalance = 1;
  double shared_params = 0;            // shared experts' share (MoE layers)
  double router_params = 0;            // replicated
  double vocab_params = 0;             // embedding or LM head share (vocab / tp)
  double heads = 0;                    // query heads per GPU
  double kv_bytes_per_token = 0;       // one layer's KV per token on one GPU
  double attention_flops_per_key = 0;  // one query against one key, one layer, one GPU
  // The same in decode: MLA's absorbed form attends in the latent (more FLOPs per key, the
  // same cached bytes); equal to attention_flops_per_key for every other attention.
  double decode_attention_flops_per_key = 0;
  // DSA sparse attention: the core attends to at most `sparse_topk` keys (0: dense) that the
  // lightning indexer picks by scoring every cached key. The indexer is replicated on every TP
  // rank, like the MLA latent its keys sit beside.
  int64_t sparse_topk = 0;
  double indexer_flops_per_key = 0;        // one query, one key, one layer, one GPU
  double indexer_key_bytes_per_token = 0;  // part of kv_bytes_per_token
  // Recurrent (linear-attention / SSM) layers, per GPU per layer; heads split over TP.
  double recurrent_params = 0;
  std::vector<GemmShape> recurrent_gemms;  // input and output projections
  double state_bytes_per_sequence = 0;     // recurrent state one sequence keeps
  double recurrent_decode_flops = 0;       // state update and read-out, per token
  double recurrent_prefill_flops = 0;      // the same in chunked prefill, per token
  int64_t recurrent_chunk_tokens = 0;      // prefill chunk: the state is read and written once each
  double ffn_width = 0;                    // widest FFN slice on one GPU (activations)
  // The GEMMs of one layer on one GPU, for shape-dependent efficiency.
  std::vector<GemmShape> attention_gemms;
  std::vector<GemmShape> dense_ffn_gemms;
  std::vector<GemmShape> expert_gemms;  // one routed expert's share
  std::vector<GemmShape> shared_gemms;  // all shared experts together
  GemmShape router_gemm;
  GemmShape lm_head_gemm;
  int64_t hidden = 0;
  int64_t vocab = 0;
};

ModelShard ShardModel(const ModelSpec& model, const Layout& layout, const PerfOptions& options);

}  // namespace shardwise
