// NemotronHForCausalLM (Nemotron-H): a hybrid stack whose blocks are spelled out in
// "hybrid_override_pattern", one character per block: M a Mamba-2 mixer, * a GQA attention
// mixer, - a squared-ReLU MLP (up and down projections, no gate). Each block has one norm.
#include <fmt/format.h>

#include "../architecture_readers.h"

namespace shardwise::model_internal {

Status ReadNemotronH(const JsonObject& c, ModelSpec& spec) {
  SW_ASSIGN_OR_RETURN(std::string pattern, c.String("hybrid_override_pattern"));
  if (static_cast<int64_t>(pattern.size()) != spec.num_layers()) {
    return Error(
        fmt::format("{}: 'hybrid_override_pattern' has {} blocks but num_hidden_layers "
                    "is {}; give one character per layer",
                    c.source, pattern.size(), spec.num_layers()));
  }
  for (int64_t i = 0; i < spec.num_layers(); ++i) {
    LayerSpec& layer = spec.layers[i];
    switch (pattern[i]) {
      case 'M':
        layer.mixer = MixerKind::kMamba2;
        layer.ffn = FfnKind::kNone;
        break;
      case '*':
        layer.mixer = MixerKind::kAttention;
        layer.ffn = FfnKind::kNone;
        break;
      case '-':
        layer.mixer = MixerKind::kNone;
        layer.ffn = FfnKind::kDense;
        break;
      default:
        return Error(
            fmt::format("{}: hybrid_override_pattern[{}] is '{}', an unknown layer "
                        "type; use M (Mamba-2), * (attention) or - (MLP)",
                        c.source, i, pattern.substr(i, 1)));
    }
  }
  if (c.Has("attention_head_dim")) {
    SW_ASSIGN_OR_RETURN(spec.head_dim, c.Int("attention_head_dim"));
  }
  SW_ASSIGN_OR_RETURN(bool bias, c.BoolOr("attention_bias", false));
  spec.qkv_bias = spec.o_bias = bias;
  std::string act = "relu2";
  if (c.Has("mlp_hidden_act")) {
    SW_ASSIGN_OR_RETURN(act, c.String("mlp_hidden_act"));
  }
  spec.gated_ffn = act != "relu2";

  RecurrentSpec r;
  SW_ASSIGN_OR_RETURN(r.num_heads, c.Int("mamba_num_heads"));
  SW_ASSIGN_OR_RETURN(r.head_dim, c.Int("mamba_head_dim"));
  SW_ASSIGN_OR_RETURN(r.num_key_heads, c.Int("n_groups"));
  SW_ASSIGN_OR_RETURN(r.key_dim, c.Int("ssm_state_size"));
  SW_ASSIGN_OR_RETURN(r.conv_kernel, c.Int("conv_kernel"));
  SW_ASSIGN_OR_RETURN(r.chunk_size, c.Int("chunk_size"));
  SW_ASSIGN_OR_RETURN(r.conv_bias, c.BoolOr("use_conv_bias", true));
  if (r.num_heads % r.num_key_heads != 0) {
    return Error(fmt::format("{}: n_groups ({}) must divide mamba_num_heads ({})", c.source,
                             r.num_key_heads, r.num_heads));
  }
  spec.recurrent = r;
  return Status();
}

}  // namespace shardwise::model_internal
