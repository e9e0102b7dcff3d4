// Qwen3.5 MoE text model (Qwen3_5MoeForCausalLM, inside Qwen3_5MoeForConditionalGeneration) and
// Qwen3-Next: a hybrid of Gated DeltaNet linear-attention layers and gated full-attention
// layers ("layer_types", or every full_attention_interval-th layer), Q/K norms per head, a
// sigmoid output gate on attention (q_proj yields query and gate), MoE with one gated shared
// expert on every layer.
#include <fmt/format.h>

#include "../architecture_readers.h"

namespace shardwise::model_internal {
namespace {

// Chunk length of the chunked Gated DeltaNet prefill kernel (flash-linear-attention's
// chunk_gated_delta_rule, which vLLM and SGLang call: 64-token chunks).
constexpr int64_t kDeltaNetChunkTokens = 64;

Status ReadLayerTypes(const JsonObject& c, ModelSpec& spec) {
  if (!c.Has("layer_types")) {
    SW_ASSIGN_OR_RETURN(int64_t interval, c.Int("full_attention_interval"));
    for (int64_t i = 0; i < spec.num_layers(); ++i) {
      spec.layers[i].mixer =
          (i + 1) % interval == 0 ? MixerKind::kAttention : MixerKind::kLinearAttention;
    }
    return Status();
  }
  const nlohmann::json& types = c.json.at("layer_types");
  if (!types.is_array() || static_cast<int64_t>(types.size()) != spec.num_layers()) {
    return Error(fmt::format("{}: 'layer_types' must list one entry per layer ({})", c.source,
                             spec.num_layers()));
  }
  for (int64_t i = 0; i < spec.num_layers(); ++i) {
    const std::string type = types[i].is_string() ? types[i].get<std::string>() : "";
    if (type == "linear_attention") {
      spec.layers[i].mixer = MixerKind::kLinearAttention;
    } else if (type == "full_attention") {
      spec.layers[i].mixer = MixerKind::kAttention;
    } else {
      return Error(
          fmt::format("{}: layer_types[{}] is {}, an unknown layer type; a hybrid "
                      "Qwen3.5 layer is 'linear_attention' or 'full_attention'",
                      c.source, i, types[i].dump()));
    }
  }
  return Status();
}

}  // namespace

Status ReadQwen35Moe(const JsonObject& c, ModelSpec& spec) {
  SW_ASSIGN_OR_RETURN(bool bias, c.BoolOr("attention_bias", false));
  spec.qkv_bias = spec.o_bias = bias;
  spec.qk_norm = QkNorm::kPerHead;
  SW_ASSIGN_OR_RETURN(spec.attention_output_gate, c.BoolOr("attn_output_gate", true));
  SW_RETURN_IF_ERROR(ReadLayerTypes(c, spec));

  RecurrentSpec r;
  SW_ASSIGN_OR_RETURN(r.num_heads, c.Int("linear_num_value_heads"));
  SW_ASSIGN_OR_RETURN(r.head_dim, c.Int("linear_value_head_dim"));
  SW_ASSIGN_OR_RETURN(r.num_key_heads, c.Int("linear_num_key_heads"));
  SW_ASSIGN_OR_RETURN(r.key_dim, c.Int("linear_key_head_dim"));
  SW_ASSIGN_OR_RETURN(r.conv_kernel, c.Int("linear_conv_kernel_dim"));
  if (r.num_heads % r.num_key_heads != 0) {
    return Error(
        fmt::format("{}: linear_num_key_heads ({}) must divide linear_num_value_heads "
                    "({})",
                    c.source, r.num_key_heads, r.num_heads));
  }
  r.chunk_size = kDeltaNetChunkTokens;
  if (c.Has("mamba_ssm_dtype")) {
    SW_ASSIGN_OR_RETURN(std::string dtype, c.String("mamba_ssm_dtype"));
    SW_ASSIGN_OR_RETURN(r.state_dtype, ParseDtype(dtype));
  }
  spec.recurrent = r;

  SW_ASSIGN_OR_RETURN(spec.moe.num_experts, c.Int("num_experts"));
  SW_ASSIGN_OR_RETURN(spec.moe.experts_per_token, c.Int("num_experts_per_tok"));
  SW_ASSIGN_OR_RETURN(spec.moe.expert_intermediate_size, c.Int("moe_intermediate_size"));
  SW_ASSIGN_OR_RETURN(spec.moe.shared_intermediate_size,
                      c.IntOr("shared_expert_intermediate_size", 0));
  spec.moe.num_shared_experts = spec.moe.shared_intermediate_size > 0 ? 1 : 0;
  spec.moe.shared_expert_gate = spec.moe.num_shared_experts > 0;
  SW_ASSIGN_OR_RETURN(int64_t step, c.IntOr("decoder_sparse_step", 1));
  if (step == 0) return Error(fmt::format("{}: 'decoder_sparse_step' must be >= 1", c.source));
  SW_ASSIGN_OR_RETURN(spec.mtp_modules, c.IntOr("mtp_num_hidden_layers", 0));
  return MarkMoeLayers(c, spec, 0, step);
}

}  // namespace shardwise::model_internal
