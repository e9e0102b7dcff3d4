// ModelSpec: the architecture of a decoder-only transformer, as read from a Hugging Face
// config.json. It holds shapes only (no weights) and is the one description of a model shared
// by the analytic half (accounting, perf, plan) and the runtime. Plain value type.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "shardwise/model/dtype.h"

namespace shardwise {

enum class AttentionKind { kMha, kGqa, kMqa, kMla };

std::string_view AttentionKindName(AttentionKind kind);

// Multi-head latent attention (DeepSeek-V2/V3): low-rank Q and a compressed KV latent.
struct MlaSpec {
  int64_t q_lora_rank = 0;  // 0 means Q is projected directly from the hidden state
  int64_t kv_lora_rank = 0;
  int64_t qk_nope_head_dim = 0;
  int64_t qk_rope_head_dim = 0;
  int64_t v_head_dim = 0;
};

// Mixture-of-experts feed-forward shape. num_experts == 0 means a dense model.
struct MoeSpec {
  int64_t num_experts = 0;          // routed experts per MoE layer
  int64_t experts_per_token = 0;    // top-k
  int64_t expert_intermediate_size = 0;
  int64_t num_shared_experts = 0;   // always-active experts (DeepSeek, Qwen2-MoE)
  int64_t shared_intermediate_size = 0;  // per shared expert
  bool shared_expert_gate = false;  // Qwen2-MoE: sigmoid gate (hidden -> 1) on the shared expert
  bool router_bias = false;         // bias vector on the router (gpt-oss)
  bool router_score_bias = false;   // DeepSeek-V3 e_score_correction_bias (one per expert)
  bool expert_bias = false;         // biases inside each expert (gpt-oss)
  int64_t num_groups = 1;           // DeepSeek n_group: experts are chosen within top groups
  int64_t groups_per_token = 1;     // DeepSeek topk_group
  bool sigmoid_scores = false;        // DeepSeek-V3 scoring_func "sigmoid" (else softmax)
  double routed_scaling_factor = 1.0;  // DeepSeek: multiplies the routed experts' weights
  double swiglu_limit = 0.0;  // gpt-oss: experts' clamped SwiGLU limit (0: plain SwiGLU)
};

// rope_scaling of config.json: how the rotary frequencies are stretched for long contexts.
// Types as Hugging Face names them ("linear", "dynamic", "yarn", "llama3"); an empty type means
// plain RoPE. A type nobody implements is kept as written so the runtime can refuse it.
struct RopeScaling {
  std::string type;
  double factor = 1.0;
  int64_t original_max_position_embeddings = 0;  // 0: max_position_embeddings
  double low_freq_factor = 1.0;                  // llama3
  double high_freq_factor = 4.0;                 // llama3
  double beta_fast = 32.0;        // yarn: rotations per context below which dims interpolate
  double beta_slow = 1.0;         // yarn
  double mscale = 0.0;            // yarn (DeepSeek): attention temperature terms; 0 = unset
  double mscale_all_dim = 0.0;    // yarn (DeepSeek)
  double attention_factor = 0.0;  // yarn: explicit cos/sin scale; 0 = derived from factor
  bool truncate = true;           // yarn: round the correction range to whole dims
};

struct LayerSpec {
  bool moe = false;            // MoE feed-forward (else dense with intermediate_size)
  int64_t sliding_window = 0;  // tokens of KV kept; 0 means full attention
};

struct ModelSpec {
  std::string name;          // catalog name or file stem
  std::string architecture;  // e.g. "LlamaForCausalLM"
  int64_t hidden_size = 0;
  int64_t num_heads = 0;
  int64_t num_kv_heads = 0;
  int64_t head_dim = 0;            // per Q/K/V head (MHA/GQA/MQA)
  int64_t intermediate_size = 0;   // dense feed-forward width
  int64_t vocab_size = 0;
  int64_t max_position_embeddings = 0;
  bool tie_word_embeddings = false;
  bool qkv_bias = false;           // Qwen2, gpt-oss
  bool o_bias = false;             // gpt-oss
  bool qk_norm = false;            // Qwen3: RMSNorm over each Q and K head
  bool attention_sinks = false;    // gpt-oss: one learned sink logit per head
  bool gated_ffn = true;           // SwiGLU: gate, up, down; false: GELU MLP, up and down (GPT-2)
  bool ffn_bias = false;           // GPT-2: biases on the MLP projections
  bool norm_bias = false;          // GPT-2: LayerNorm (weight and bias) instead of RMSNorm
  int64_t position_embeddings = 0;  // GPT-2: rows of the learned absolute position table
  AttentionKind attention = AttentionKind::kMha;
  std::optional<MlaSpec> mla;
  MoeSpec moe;
  std::vector<LayerSpec> layers;
  Dtype native_dtype = Dtype::kBf16;  // the published checkpoint's weight format
  // Numerics the runtime needs (analytic code ignores them).
  double rms_norm_eps = 1e-6;
  double rope_theta = 10000.0;
  RopeScaling rope_scaling;
  bool norm_topk_prob = false;  // renormalise the top-k routing weights to sum to 1

  int64_t num_layers() const { return static_cast<int64_t>(layers.size()); }
  bool is_moe() const { return moe.num_experts > 0; }
  int64_t num_moe_layers() const;
  int64_t num_sliding_layers() const;
};

}  // namespace shardwise
