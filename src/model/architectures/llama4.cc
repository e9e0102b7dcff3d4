// Llama4ForCausalLM (the text model of Llama 4 Scout and Maverick): MoE on every
// interleave_moe_layer_step-th layer (routed experts of intermediate_size plus one shared
// expert of the same width), dense layers of intermediate_size_mlp; chunked local attention
// (attention_chunk_size) on RoPE layers, global attention on every no_rope_layer_interval-th
// layer (Hugging Face Llama4TextConfig defaults: 4).
#include <fmt/format.h>

#include "../architecture_readers.h"

namespace shardwise::model_internal {
namespace {

constexpr int64_t kNoRopeLayerInterval = 4;  // Llama4TextConfig.no_rope_layer_interval default

}  // namespace

Status ReadLlama4(const JsonObject& c, ModelSpec& spec) {
  SW_ASSIGN_OR_RETURN(bool bias, c.BoolOr("attention_bias", false));
  spec.qkv_bias = spec.o_bias = bias;
  SW_ASSIGN_OR_RETURN(spec.moe.num_experts, c.Int("num_local_experts"));
  SW_ASSIGN_OR_RETURN(spec.moe.experts_per_token, c.Int("num_experts_per_tok"));
  SW_ASSIGN_OR_RETURN(spec.moe.expert_intermediate_size, c.Int("intermediate_size"));
  spec.moe.num_shared_experts = 1;
  spec.moe.shared_intermediate_size = spec.moe.expert_intermediate_size;
  SW_ASSIGN_OR_RETURN(spec.intermediate_size, c.Int("intermediate_size_mlp"));
  SW_ASSIGN_OR_RETURN(int64_t step, c.IntOr("interleave_moe_layer_step", 1));
  if (step == 0) {
    return Error(fmt::format("{}: 'interleave_moe_layer_step' must be >= 1", c.source));
  }
  SW_RETURN_IF_ERROR(MarkMoeLayers(c, spec, 0, step));
  SW_ASSIGN_OR_RETURN(int64_t chunk, c.IntOr("attention_chunk_size", 0));
  for (int64_t i = 0; i < spec.num_layers(); ++i) {
    const bool rope_layer = (i + 1) % kNoRopeLayerInterval != 0;
    spec.layers[i].sliding_window = rope_layer ? chunk : 0;
  }
  return Status();
}

}  // namespace shardwise::model_internal
