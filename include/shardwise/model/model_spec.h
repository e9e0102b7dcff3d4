// ModelSpec: the architecture of a decoder-only transformer, as read from a Hugging Face
// config.json. It holds shapes only (no weights) and is the one description of a model shared
// by the analytic half (accounting, perf, plan) and the runtime. Plain value type.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "shardwise/model/dtype.h"
#include "shardwise/model/weight_format.h"

namespace shardwise {

enum class AttentionKind { kMha, kGqa, kMqa, kMla };

std::string_view AttentionKindName(AttentionKind kind);

// What mixes tokens in a layer: softmax attention with a KV cache, a recurrent mixer with a
// fixed-size state per sequence (Gated DeltaNet linear attention, Mamba-2), or nothing (a
// feed-forward-only block of a hybrid pattern).
enum class MixerKind { kAttention, kLinearAttention, kMamba2, kNone };

// The feed-forward part of a layer.
enum class FfnKind { kDense, kMoe, kNone };

std::string_view MixerKindName(MixerKind kind);

// Per-head Q/K RMSNorm: none, one weight vector of head_dim shared by all heads (Qwen3), or
// one over the whole Q and K projections (MiniMax-M2 "per_layer").
enum class QkNorm { kNone, kPerHead, kPerLayer };

// Multi-head latent attention (DeepSeek-V2/V3): low-rank Q and a compressed KV latent.
struct MlaSpec {
  int64_t q_lora_rank = 0;  // 0 means Q is projected directly from the hidden state
  int64_t kv_lora_rank = 0;
  int64_t qk_nope_head_dim = 0;
  int64_t qk_rope_head_dim = 0;
  int64_t v_head_dim = 0;
};

// A recurrent token mixer, in one shape for both kinds it covers:
//   Gated DeltaNet (Qwen3.5): num_heads value heads of head_dim; num_key_heads Q/K heads of
//     key_dim; per value head a key_dim x head_dim state matrix.
//   Mamba-2 (Nemotron-H): num_heads SSM heads of head_dim (P); num_key_heads = n_groups of B/C
//     projections of key_dim = ssm_state_size (N); per head an N x P state.
// Both run a depthwise causal convolution of conv_kernel taps over 2 x num_key_heads x key_dim
// + num_heads x head_dim channels, and prefill in chunks of chunk_size tokens.
struct RecurrentSpec {
  int64_t num_heads = 0;
  int64_t head_dim = 0;
  int64_t num_key_heads = 0;
  int64_t key_dim = 0;
  int64_t conv_kernel = 0;
  int64_t chunk_size = 0;
  bool conv_bias = false;
  Dtype state_dtype = Dtype::kBf16;  // the recurrent state's format (e.g. mamba_ssm_dtype)
};

// DeepSeek Sparse Attention (DeepSeek-V3.2, GLM-5): a lightning indexer scores every cached key
// with index_heads small heads of index_head_dim and keeps the top `topk` for the MLA core.
struct SparseIndexerSpec {
  int64_t index_heads = 0;
  int64_t index_head_dim = 0;
  int64_t topk = 0;
};

// Mixture-of-experts feed-forward shape. num_experts == 0 means a dense model.
struct MoeSpec {
  int64_t num_experts = 0;        // routed experts per MoE layer
  int64_t experts_per_token = 0;  // top-k
  int64_t expert_intermediate_size = 0;
  int64_t num_shared_experts = 0;        // always-active experts (DeepSeek, Qwen2-MoE)
  int64_t shared_intermediate_size = 0;  // per shared expert
  bool shared_expert_gate = false;     // Qwen2-MoE: sigmoid gate (hidden -> 1) on the shared expert
  bool router_bias = false;            // bias vector on the router (gpt-oss)
  bool router_score_bias = false;      // DeepSeek-V3 e_score_correction_bias (one per expert)
  bool expert_bias = false;            // biases inside each expert (gpt-oss)
  int64_t num_groups = 1;              // DeepSeek n_group: experts are chosen within top groups
  int64_t groups_per_token = 1;        // DeepSeek topk_group
  bool sigmoid_scores = false;         // DeepSeek-V3 scoring_func "sigmoid" (else softmax)
  double routed_scaling_factor = 1.0;  // DeepSeek: multiplies the routed experts' weights
  double swiglu_limit = 0.0;           // gpt-oss: experts' clamped SwiGLU limit (0: plain SwiGLU)
  // Experts 0..N-1 that every token selects besides its top-k: shared experts placed among the
  // routed ones (the step model's --shared-experts routed); 0 in every config.json.
  int64_t always_selected = 0;
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
  MixerKind mixer = MixerKind::kAttention;
  FfnKind ffn = FfnKind::kDense;  // dense uses intermediate_size
  // Attention layers: tokens of KV kept; 0 means full attention. Chunked local attention
  // (Llama 4) is held as a window of the chunk size, its upper bound.
  int64_t sliding_window = 0;

  bool moe() const { return ffn == FfnKind::kMoe; }
  bool attention() const { return mixer == MixerKind::kAttention; }
  bool recurrent() const {
    return mixer == MixerKind::kLinearAttention || mixer == MixerKind::kMamba2;
  }
};

struct ModelSpec {
  std::string name;          // catalog name or file stem
  std::string architecture;  // e.g. "LlamaForCausalLM"
  int64_t hidden_size = 0;
  int64_t num_heads = 0;
  int64_t num_kv_heads = 0;
  int64_t head_dim = 0;           // per Q/K/V head (MHA/GQA/MQA)
  int64_t intermediate_size = 0;  // dense feed-forward width
  int64_t vocab_size = 0;
  int64_t max_position_embeddings = 0;
  bool tie_word_embeddings = false;
  bool qkv_bias = false;  // Qwen2, gpt-oss
  bool o_bias = false;    // gpt-oss
  QkNorm qk_norm = QkNorm::kNone;
  bool attention_output_gate = false;  // Qwen3.5: q_proj also yields a sigmoid gate per head
  bool attention_sinks = false;        // gpt-oss: one learned sink logit per head
  // SwiGLU (gate, up, down); false: up and down only (GPT-2's GELU MLP, Nemotron-H's ReLU^2)
  bool gated_ffn = true;
  bool ffn_bias = false;            // GPT-2: biases on the MLP projections
  bool norm_bias = false;           // GPT-2: LayerNorm (weight and bias) instead of RMSNorm
  int64_t position_embeddings = 0;  // GPT-2: rows of the learned absolute position table
  AttentionKind attention = AttentionKind::kMha;
  std::optional<MlaSpec> mla;
  std::optional<SparseIndexerSpec> indexer;  // DSA on every attention layer
  std::optional<RecurrentSpec> recurrent;    // shape of the linear-attention / SSM layers
  MoeSpec moe;
  std::vector<LayerSpec> layers;
  Dtype native_dtype = Dtype::kBf16;  // the published checkpoint's weight format (unquantised)
  WeightFormats native_formats;       // per module, from the checkpoint's quantization config
  std::vector<std::string> notes;     // what the reader left out (e.g. a vision tower)
  int64_t mtp_modules = 0;            // multi-token-prediction modules declared, not in `layers`
  // Numerics the runtime needs (analytic code ignores them).
  double rms_norm_eps = 1e-6;
  double rope_theta = 10000.0;
  RopeScaling rope_scaling;
  bool norm_topk_prob = false;  // renormalise the top-k routing weights to sum to 1

  int64_t num_layers() const { return static_cast<int64_t>(layers.size()); }
  bool is_moe() const { return moe.num_experts > 0; }
  // `notes` and the MTP modules left out, for a reader of the model.
  std::vector<std::string> AllNotes() const;
  int64_t num_moe_layers() const;
  int64_t num_sliding_layers() const;
  int64_t num_attention_layers() const;
  int64_t num_recurrent_layers() const;
};

}  // namespace shardwise
