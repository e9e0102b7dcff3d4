// Exact accounting of a model: parameters (total and active per token), weight bytes at each
// precision or per module, KV-cache bytes per token by attention kind, recurrent state bytes
// per sequence (linear-attention and SSM layers), and forward FLOPs for prefill and decode with
// matmuls and the token mixers' core separated. Pure functions of a ModelSpec; thread-safe.
#pragma once

#include <cstdint>

#include "shardwise/model/model_spec.h"

namespace shardwise {

struct ParamBreakdown {
  int64_t embedding = 0;  // input embedding table (and a learned position table)
  int64_t lm_head = 0;    // output projection; 0 when tied to the embedding
  int64_t attention = 0;  // attention layers: projections, biases, Q/K norms, sinks, DSA indexer
  int64_t recurrent = 0;  // linear-attention and SSM layers' mixers
  int64_t dense_ffn = 0;  // feed-forward of the dense layers
  int64_t routed_experts = 0;  // every routed expert of every MoE layer
  int64_t shared_experts = 0;  // shared experts and their gates
  int64_t router = 0;          // routers and their biases
  int64_t norms = 0;           // RMSNorm weights (one per mixer and per FFN, one final)
  int64_t total = 0;
  // Parameters one token touches, counting both embedding tables (the convention of the
  // Mixtral and Qwen model cards).
  int64_t active = 0;
  // Parameters one token multiplies with: `active` less the input-embedding lookup (the
  // convention of the DeepSeek-V3 and gpt-oss model cards). 2 x this = matmul FLOPs per token.
  int64_t active_matmul = 0;
};

ParamBreakdown CountParams(const ModelSpec& spec);

// Parameters of one attention layer's attention block, DSA indexer included (identical for
// every attention layer of a model).
int64_t AttentionParamsPerLayer(const ModelSpec& spec);
// Parameters of one layer's DSA lightning indexer (0 without one).
int64_t IndexerParamsPerLayer(const ModelSpec& spec);
// Parameters of one dense feed-forward block: 3 h F gated (SwiGLU) or 2 h F (GELU MLP), plus
// biases where present.
int64_t DenseFfnParamsPerLayer(const ModelSpec& spec);
// Parameters of one routed expert.
int64_t ParamsPerExpert(const ModelSpec& spec);

// Weight bytes if every parameter is stored in `dtype`.
double WeightBytes(const ModelSpec& spec, Dtype dtype);
// Weight bytes with each module in its own format.
double WeightBytes(const ModelSpec& spec, const WeightFormats& formats);
// Weight bytes of the published checkpoint (spec.native_formats, from its quantization config):
// fp8 checkpoints keep embeddings in bf16; mxfp4 ones (gpt-oss) quantise only routed experts.
double NativeWeightBytes(const ModelSpec& spec);

// KV-cache bytes one token adds to one attention layer: 2 x kv_heads x head_dim (MHA/GQA/MQA)
// or kv_lora_rank + qk_rope_head_dim (MLA latent cache), plus the DSA indexer's key
// (index_head_dim), times the element size.
double KvBytesPerTokenPerLayer(const ModelSpec& spec, Dtype kv_dtype);
// The DSA indexer's share of KvBytesPerTokenPerLayer (0 without an indexer).
double IndexerKeyBytesPerToken(const ModelSpec& spec, Dtype kv_dtype);
// KV bytes per token over all attention layers while the context is within every window.
double KvBytesPerToken(const ModelSpec& spec, Dtype kv_dtype);
// KV bytes of one sequence of `context_tokens`; sliding-window layers keep at most the window.
double KvBytesForSequence(const ModelSpec& spec, int64_t context_tokens, Dtype kv_dtype);
// Everything one sequence keeps between steps: its KV cache plus the recurrent state of the
// linear-attention/SSM layers (which does not grow with the context).
double SequenceCacheBytes(const ModelSpec& spec, int64_t context_tokens, Dtype kv_dtype);

// Recurrent mixers (Gated DeltaNet, Mamba-2); require spec.recurrent.
// Channels of the causal convolution: 2 x key heads x key_dim + heads x head_dim.
int64_t RecurrentConvChannels(const ModelSpec& spec);
int64_t RecurrentParamsPerLayer(const ModelSpec& spec);
// State one sequence keeps in one recurrent layer: heads x key_dim x head_dim in the state
// format plus the convolution's last conv_kernel - 1 inputs in bf16.
double StateBytesPerSequencePerLayer(const ModelSpec& spec);
// Over all recurrent layers (0 when there are none).
double StateBytesPerSequence(const ModelSpec& spec);
// Non-GEMM FLOPs of one recurrent layer per token: state update and read-out, convolution.
double RecurrentDecodeFlopsPerToken(const ModelSpec& spec);
// The same in chunked prefill, which adds causal attention inside each chunk.
double RecurrentPrefillFlopsPerToken(const ModelSpec& spec);

struct Flops {
  double matmul = 0;  // projections, FFN/experts, router, LM head
  // The token mixers' core: QK^T and AV (score-softmax-value, causal) of attention layers, the
  // DSA indexer's scoring, and the recurrent layers' state updates.
  double attention = 0;
  double total() const { return matmul + attention; }
};

// Forward FLOPs of one decode step of one sequence whose KV cache holds `context_tokens`.
Flops DecodeFlopsPerToken(const ModelSpec& spec, int64_t context_tokens);
// Forward FLOPs to prefill one prompt of `prompt_tokens` (causal; LM head on the last token).
Flops PrefillFlops(const ModelSpec& spec, int64_t prompt_tokens);

// Mixer-core FLOPs for one query token with `context_tokens` of context, all layers: attention
// over min(context, window, DSA top-k) keys, the indexer over every key, recurrent updates.
double AttentionFlopsPerQuery(const ModelSpec& spec, int64_t context_tokens);

// AttentionFlopsPerQuery prepared once for a model, for callers that evaluate it per iteration
// (the simulator's MFU): the recurrent layers' constant, the FLOPs per key of the layers that see
// every key, and one capped term per distinct key limit. O(distinct limits) per call.
class AttentionFlopsCurve {
 public:
  explicit AttentionFlopsCurve(const ModelSpec& spec);
  double operator()(int64_t context_tokens) const;

 private:
  double constant_ = 0;
  double per_key_ = 0;
  std::vector<std::pair<double, double>> capped_;  // (key limit, FLOPs per key of its layers)
};

}  // namespace shardwise
