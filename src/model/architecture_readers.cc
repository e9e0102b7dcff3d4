#include "architecture_readers.h"

#include <fmt/format.h>

#include <algorithm>

#include "shardwise/model/model_limits.h"

namespace shardwise::model_internal {
namespace {

// Every layer full attention unless the config names a window (Mistral/Mixtral style).
Status ReadUniformSlidingWindow(const JsonObject& c, ModelSpec& spec) {
  SW_ASSIGN_OR_RETURN(int64_t window, c.IntOr("sliding_window", 0));
  for (LayerSpec& layer : spec.layers) layer.sliding_window = window;
  return Status();
}

}  // namespace

Status MarkMoeLayers(const JsonObject& c, ModelSpec& spec, int64_t first_moe, int64_t step) {
  std::vector<int64_t> dense_layers;
  if (c.Has("mlp_only_layers")) {
    if (!c.json.at("mlp_only_layers").is_array()) {
      return Error(fmt::format("{}: 'mlp_only_layers' must be a list of layer indices", c.source));
    }
    for (const auto& index : c.json.at("mlp_only_layers")) {
      if (!index.is_number_integer()) {
        return Error(fmt::format("{}: 'mlp_only_layers' must list layer indices, got {}", c.source,
                                 Excerpt(index)));
      }
      dense_layers.push_back(index.get<int64_t>());
    }
  }
  for (int64_t i = 0; i < spec.num_layers(); ++i) {
    const bool listed_dense =
        std::find(dense_layers.begin(), dense_layers.end(), i) != dense_layers.end();
    const bool moe = i >= first_moe && (i + 1) % step == 0 && !listed_dense;
    spec.layers[i].ffn = moe ? FfnKind::kMoe : FfnKind::kDense;
  }
  return Status();
}

namespace {

Status ReadLlama(const JsonObject& c, ModelSpec& spec) {
  SW_ASSIGN_OR_RETURN(bool bias, c.BoolOr("attention_bias", false));
  spec.qkv_bias = spec.o_bias = bias;
  return ReadUniformSlidingWindow(c, spec);
}

Status ReadQwen2(const JsonObject& c, ModelSpec& spec) {
  spec.qkv_bias = true;  // Qwen2 always has Q/K/V biases and no output bias
  SW_ASSIGN_OR_RETURN(bool use_window, c.BoolOr("use_sliding_window", false));
  if (use_window) {
    SW_ASSIGN_OR_RETURN(int64_t window, c.Int("sliding_window"));
    SW_ASSIGN_OR_RETURN(int64_t full_layers, c.IntOr("max_window_layers", spec.num_layers()));
    for (int64_t i = full_layers; i < spec.num_layers(); ++i)
      spec.layers[i].sliding_window = window;
  }
  return Status();
}

Status ReadQwen3(const JsonObject& c, ModelSpec& spec) {
  SW_ASSIGN_OR_RETURN(bool bias, c.BoolOr("attention_bias", false));
  spec.qkv_bias = spec.o_bias = bias;
  spec.qk_norm = QkNorm::kPerHead;
  return Status();
}

Status ReadMixtral(const JsonObject& c, ModelSpec& spec) {
  SW_ASSIGN_OR_RETURN(spec.moe.num_experts, c.Int("num_local_experts"));
  SW_ASSIGN_OR_RETURN(spec.moe.experts_per_token, c.Int("num_experts_per_tok"));
  spec.moe.expert_intermediate_size = spec.intermediate_size;
  for (LayerSpec& layer : spec.layers) layer.ffn = FfnKind::kMoe;
  return ReadUniformSlidingWindow(c, spec);
}

Status ReadQwenMoeCommon(const JsonObject& c, ModelSpec& spec) {
  SW_ASSIGN_OR_RETURN(spec.moe.num_experts, c.Int("num_experts"));
  SW_ASSIGN_OR_RETURN(spec.moe.experts_per_token, c.Int("num_experts_per_tok"));
  SW_ASSIGN_OR_RETURN(spec.moe.expert_intermediate_size, c.Int("moe_intermediate_size"));
  SW_ASSIGN_OR_RETURN(int64_t step, c.IntOr("decoder_sparse_step", 1));
  if (step == 0) return Error(fmt::format("{}: 'decoder_sparse_step' must be >= 1", c.source));
  return MarkMoeLayers(c, spec, 0, step);
}

Status ReadQwen2Moe(const JsonObject& c, ModelSpec& spec) {
  SW_RETURN_IF_ERROR(ReadQwen2(c, spec));
  SW_RETURN_IF_ERROR(ReadQwenMoeCommon(c, spec));
  SW_ASSIGN_OR_RETURN(spec.moe.shared_intermediate_size,
                      c.IntOr("shared_expert_intermediate_size", 0));
  spec.moe.num_shared_experts = spec.moe.shared_intermediate_size > 0 ? 1 : 0;
  spec.moe.shared_expert_gate = spec.moe.num_shared_experts > 0;
  return Status();
}

Status ReadQwen3Moe(const JsonObject& c, ModelSpec& spec) {
  SW_RETURN_IF_ERROR(ReadQwen3(c, spec));
  return ReadQwenMoeCommon(c, spec);
}

}  // namespace

Status ReadDeepseekV3(const JsonObject& c, ModelSpec& spec) {
  MlaSpec mla;
  SW_ASSIGN_OR_RETURN(mla.q_lora_rank, c.IntOr("q_lora_rank", 0, kMaxModelWidth));
  SW_ASSIGN_OR_RETURN(mla.kv_lora_rank, c.Int("kv_lora_rank", kMaxModelWidth));
  SW_ASSIGN_OR_RETURN(mla.qk_nope_head_dim, c.Int("qk_nope_head_dim", kMaxModelWidth));
  SW_ASSIGN_OR_RETURN(mla.qk_rope_head_dim, c.Int("qk_rope_head_dim", kMaxModelWidth));
  SW_ASSIGN_OR_RETURN(mla.v_head_dim, c.Int("v_head_dim", kMaxModelWidth));
  spec.mla = mla;
  spec.attention = AttentionKind::kMla;
  spec.head_dim = mla.qk_nope_head_dim + mla.qk_rope_head_dim;

  SW_ASSIGN_OR_RETURN(spec.moe.num_experts, c.Int("n_routed_experts"));
  SW_ASSIGN_OR_RETURN(spec.moe.experts_per_token, c.Int("num_experts_per_tok"));
  SW_ASSIGN_OR_RETURN(spec.moe.expert_intermediate_size, c.Int("moe_intermediate_size"));
  SW_ASSIGN_OR_RETURN(spec.moe.num_shared_experts, c.IntOr("n_shared_experts", 0));
  spec.moe.shared_intermediate_size = spec.moe.expert_intermediate_size;
  SW_ASSIGN_OR_RETURN(spec.mtp_modules, c.IntOr("num_nextn_predict_layers", 0));
  SW_ASSIGN_OR_RETURN(spec.moe.num_groups, c.IntOr("n_group", 1));
  SW_ASSIGN_OR_RETURN(spec.moe.groups_per_token, c.IntOr("topk_group", 1));
  if (spec.moe.num_groups == 0 || spec.moe.num_experts % spec.moe.num_groups != 0) {
    return Error(fmt::format("{}: n_group ({}) must divide n_routed_experts ({})", c.source,
                             spec.moe.num_groups, spec.moe.num_experts));
  }
  if (spec.moe.groups_per_token == 0 || spec.moe.groups_per_token > spec.moe.num_groups) {
    return Error(fmt::format("{}: topk_group ({}) must be between 1 and n_group ({})", c.source,
                             spec.moe.groups_per_token, spec.moe.num_groups));
  }
  std::string topk_method = "greedy";
  if (c.Has("topk_method")) {
    SW_ASSIGN_OR_RETURN(topk_method, c.String("topk_method"));
  }
  spec.moe.router_score_bias = topk_method == "noaux_tc";
  std::string scoring = "softmax";
  if (c.Has("scoring_func")) {
    SW_ASSIGN_OR_RETURN(scoring, c.String("scoring_func"));
  }
  if (scoring != "softmax" && scoring != "sigmoid") {
    return Error(fmt::format("{}: scoring_func must be 'softmax' or 'sigmoid', got '{}'", c.source,
                             scoring));
  }
  spec.moe.sigmoid_scores = scoring == "sigmoid";
  SW_ASSIGN_OR_RETURN(spec.moe.routed_scaling_factor, c.NumberOr("routed_scaling_factor", 1.0));
  SW_ASSIGN_OR_RETURN(int64_t first_dense, c.IntOr("first_k_dense_replace", 0));
  SW_ASSIGN_OR_RETURN(int64_t freq, c.IntOr("moe_layer_freq", 1));
  if (freq == 0) return Error(fmt::format("{}: 'moe_layer_freq' must be >= 1", c.source));
  for (int64_t i = 0; i < spec.num_layers(); ++i) {
    spec.layers[i].ffn = i >= first_dense && i % freq == 0 ? FfnKind::kMoe : FfnKind::kDense;
  }
  return Status();
}

namespace {

Status ReadGptOss(const JsonObject& c, ModelSpec& spec) {
  spec.qkv_bias = spec.o_bias = true;
  spec.attention_sinks = true;
  SW_ASSIGN_OR_RETURN(spec.moe.num_experts, c.Int("num_local_experts"));
  const char* topk_key = c.Has("num_experts_per_tok") ? "num_experts_per_tok" : "experts_per_token";
  SW_ASSIGN_OR_RETURN(spec.moe.experts_per_token, c.Int(topk_key));
  spec.moe.expert_intermediate_size = spec.intermediate_size;
  spec.moe.router_bias = spec.moe.expert_bias = true;
  spec.norm_topk_prob = true;  // softmax over the top-k router logits
  SW_ASSIGN_OR_RETURN(spec.moe.swiglu_limit, c.NumberOr("swiglu_limit", 0.0));
  for (LayerSpec& layer : spec.layers) layer.ffn = FfnKind::kMoe;

  SW_ASSIGN_OR_RETURN(int64_t window, c.IntOr("sliding_window", 0));
  if (c.Has("layer_types")) {
    const auto& types = c.json.at("layer_types");
    if (!types.is_array() || static_cast<int64_t>(types.size()) != spec.num_layers()) {
      return Error(fmt::format("{}: 'layer_types' must list one entry per layer ({})", c.source,
                               spec.num_layers()));
    }
    for (int64_t i = 0; i < spec.num_layers(); ++i) {
      const std::string type = types[i].is_string() ? types[i].get<std::string>() : "";
      if (type == "sliding_attention") {
        if (window == 0) {
          return Error(
              fmt::format("{}: layer_types has sliding layers but 'sliding_window' is "
                          "missing",
                          c.source));
        }
        spec.layers[i].sliding_window = window;
      } else if (type != "full_attention") {
        return Error(
            fmt::format("{}: layer_types[{}] must be 'sliding_attention' or "
                        "'full_attention', got {}",
                        c.source, i, Excerpt(types[i])));
      }
    }
  }
  return Status();
}

// GPT-2 (and Megatron's GPT models): learned positions, LayerNorm, biases everywhere, a GELU MLP.
Status ReadGpt2(const JsonObject& c, ModelSpec& spec) {
  spec.qkv_bias = spec.o_bias = spec.ffn_bias = spec.norm_bias = true;
  spec.gated_ffn = false;
  SW_ASSIGN_OR_RETURN(spec.position_embeddings, c.Int("max_position_embeddings"));
  SW_ASSIGN_OR_RETURN(spec.rms_norm_eps, c.NumberOr("layer_norm_epsilon", 1e-5));
  return Status();
}

}  // namespace

StatusOr<nlohmann::json> WithStandardKeys(const nlohmann::json& config,
                                          const std::string& architecture,
                                          const std::string& source) {
  if (architecture != "GPT2LMHeadModel" || !config.is_object()) return config;
  for (const char* key : {"n_embd", "n_head", "n_layer", "n_positions", "vocab_size"}) {
    if (!config.contains(key) || config.at(key).is_null()) {
      return Error(fmt::format("{}: GPT2LMHeadModel config needs '{}'", source, key));
    }
  }
  nlohmann::json out = config;
  const std::pair<const char*, const char*> kAliases[] = {
      {"n_embd", "hidden_size"},
      {"n_head", "num_attention_heads"},
      {"n_layer", "num_hidden_layers"},
      {"n_positions", "max_position_embeddings"},
      {"n_inner", "intermediate_size"}};
  for (const auto& [gpt2, standard] : kAliases) {
    if (out.contains(gpt2) && !out.at(gpt2).is_null() && !out.contains(standard)) {
      out[standard] = out.at(gpt2);
    }
  }
  if (!out.contains("intermediate_size") && out.at("hidden_size").is_number_integer()) {
    out["intermediate_size"] = 4 * out.at("hidden_size").get<int64_t>();
  }
  if (!out.contains("tie_word_embeddings")) out["tie_word_embeddings"] = true;
  return out;
}

const std::vector<ArchitectureEntry>& ArchitectureTable() {
  static const std::vector<ArchitectureEntry> table = {
      {"LlamaForCausalLM", ReadLlama},
      {"MistralForCausalLM", ReadLlama},
      {"Qwen2ForCausalLM", ReadQwen2},
      {"Qwen3ForCausalLM", ReadQwen3},
      {"MixtralForCausalLM", ReadMixtral},
      {"Qwen2MoeForCausalLM", ReadQwen2Moe},
      {"Qwen3MoeForCausalLM", ReadQwen3Moe},
      {"DeepseekV3ForCausalLM", ReadDeepseekV3},
      {"GptOssForCausalLM", ReadGptOss},
      {"GPT2LMHeadModel", ReadGpt2},
      {"MiniMaxM2ForCausalLM", ReadMiniMaxM2},
      {"Qwen3_5MoeForCausalLM", ReadQwen35Moe},
      {"Qwen3NextForCausalLM", ReadQwen35Moe},
      {"NemotronHForCausalLM", ReadNemotronH},
      {"DeepseekV32ForCausalLM", ReadDeepseekSparse},
      {"GlmMoeDsaForCausalLM", ReadDeepseekSparse},
      {"Llama4ForCausalLM", ReadLlama4},
  };
  return table;
}

const std::vector<WrapperEntry>& WrapperTable() {
  static const std::vector<WrapperEntry> table = {
      {"Qwen3_5MoeForConditionalGeneration", "Qwen3_5MoeForCausalLM"},
      {"KimiK25ForConditionalGeneration", "DeepseekV3ForCausalLM"},
      {"Llama4ForConditionalGeneration", "Llama4ForCausalLM"},
      {"Qwen3VLForConditionalGeneration", "Qwen3ForCausalLM"},
      {"Qwen3VLMoeForConditionalGeneration", "Qwen3MoeForCausalLM"},
  };
  return table;
}

}  // namespace shardwise::model_internal
