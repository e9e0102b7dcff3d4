// Exact accounting of a model: parameters (total and active per token), weight bytes at each
// precision, KV-cache bytes per token by attention kind, and forward FLOPs for prefill and
// decode with matmuls and attention separated. Pure functions of a ModelSpec; thread-safe.
#pragma once

#include <cstdint>

#include "shardwise/model/model_spec.h"

namespace shardwise {

struct ParamBreakdown {
  int64_t embedding = 0;       // input embedding table (and a learned position table)
  int64_t lm_head = 0;         // output projection; 0 when tied to the embedding
  int64_t attention = 0;       // all layers: projections, biases, Q/K norms, sinks
  int64_t dense_ffn = 0;       // feed-forward of the dense layers
  int64_t routed_experts = 0;  // every routed expert of every MoE layer
  int64_t shared_experts = 0;  // shared experts and their gates
  int64_t router = 0;          // routers and their biases
  int64_t norms = 0;           // RMSNorm weights (two per layer, one final)
  int64_t total = 0;
  // Parameters one token touches, counting both embedding tables (the convention of the
  // Mixtral and Qwen model cards).
  int64_t active = 0;
  // Parameters one token multiplies with: `active` less the input-embedding lookup (the
  // convention of the DeepSeek-V3 and gpt-oss model cards). 2 x this = matmul FLOPs per token.
  int64_t active_matmul = 0;
};

ParamBreakdown CountParams(const ModelSpec& spec);

// Parameters of one layer's attention block (identical for every layer of a model).
int64_t AttentionParamsPerLayer(const ModelSpec& spec);
// Parameters of one dense feed-forward block: 3 h F gated (SwiGLU) or 2 h F (GELU MLP), plus
// biases where present.
int64_t DenseFfnParamsPerLayer(const ModelSpec& spec);
// Parameters of one routed expert.
int64_t ParamsPerExpert(const ModelSpec& spec);

// Weight bytes if every parameter is stored in `dtype`.
double WeightBytes(const ModelSpec& spec, Dtype dtype);
// Weight bytes of the published checkpoint: fp8 checkpoints keep embeddings in bf16; mxfp4
// checkpoints (gpt-oss) quantise only the routed experts.
double NativeWeightBytes(const ModelSpec& spec);

// KV-cache bytes one token adds to one layer: 2 x kv_heads x head_dim (MHA/GQA/MQA) or
// kv_lora_rank + qk_rope_head_dim (MLA latent cache), times the element size.
double KvBytesPerTokenPerLayer(const ModelSpec& spec, Dtype kv_dtype);
// KV bytes per token over all layers while the context is within every sliding window.
double KvBytesPerToken(const ModelSpec& spec, Dtype kv_dtype);
// KV bytes of one sequence of `context_tokens`; sliding-window layers keep at most the window.
double KvBytesForSequence(const ModelSpec& spec, int64_t context_tokens, Dtype kv_dtype);

struct Flops {
  double matmul = 0;     // projections, FFN/experts, router, LM head
  double attention = 0;  // QK^T and AV (score-softmax-value), causal
  double total() const { return matmul + attention; }
};

// Forward FLOPs of one decode step of one sequence whose KV cache holds `context_tokens`.
Flops DecodeFlopsPerToken(const ModelSpec& spec, int64_t context_tokens);
// Forward FLOPs to prefill one prompt of `prompt_tokens` (causal; LM head on the last token).
Flops PrefillFlops(const ModelSpec& spec, int64_t prompt_tokens);

// Attention FLOPs for one query token attending to `context_tokens` keys, all layers.
double AttentionFlopsPerQuery(const ModelSpec& spec, int64_t context_tokens);

}  // namespace shardwise
