// MiniMaxM2ForCausalLM (MiniMax-M2, M2.5): GQA with RMSNorm over the whole Q and K projections
// ("qk_norm_type": "per_layer"), partial rotary (rotary_dim of head_dim; no parameters), every
// layer a MoE of num_local_experts with sigmoid routing and a per-expert routing bias, no shared
// expert. The MTP modules are not part of the main model and are not counted.
#include <fmt/format.h>

#include "../architecture_readers.h"

namespace shardwise::model_internal {

Status ReadMiniMaxM2(const JsonObject& c, ModelSpec& spec) {
  SW_ASSIGN_OR_RETURN(bool bias, c.BoolOr("attention_bias", false));
  spec.qkv_bias = spec.o_bias = bias;
  SW_ASSIGN_OR_RETURN(bool qk_norm, c.BoolOr("use_qk_norm", false));
  if (qk_norm) {
    std::string type = "per_layer";
    if (c.Has("qk_norm_type")) {
      SW_ASSIGN_OR_RETURN(type, c.String("qk_norm_type"));
    }
    if (type != "per_layer" && type != "per_head") {
      return Error(fmt::format("{}: 'qk_norm_type' must be 'per_layer' or 'per_head', got '{}'",
                               c.source, type));
    }
    spec.qk_norm = type == "per_layer" ? QkNorm::kPerLayer : QkNorm::kPerHead;
  }
  SW_ASSIGN_OR_RETURN(spec.moe.num_experts, c.Int("num_local_experts"));
  SW_ASSIGN_OR_RETURN(spec.moe.experts_per_token, c.Int("num_experts_per_tok"));
  spec.moe.expert_intermediate_size = spec.intermediate_size;
  SW_ASSIGN_OR_RETURN(spec.moe.shared_intermediate_size, c.IntOr("shared_intermediate_size", 0));
  spec.moe.num_shared_experts = spec.moe.shared_intermediate_size > 0 ? 1 : 0;
  SW_ASSIGN_OR_RETURN(spec.moe.router_score_bias, c.BoolOr("use_routing_bias", false));
  for (LayerSpec& layer : spec.layers) layer.ffn = FfnKind::kMoe;
  SW_ASSIGN_OR_RETURN(spec.mtp_modules, c.IntOr("num_mtp_modules", 0));
  return Status();
}

}  // namespace shardwise::model_internal
