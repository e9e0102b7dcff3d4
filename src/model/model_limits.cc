#include "shardwise/model/model_limits.h"

#include <fmt/format.h>

#include <algorithm>
#include <initializer_list>
#include <utility>

#include "shardwise/common/checked_math.h"

namespace shardwise {
namespace {

struct Dimension {
  const char* key;  // the config.json key
  int64_t value;
  int64_t max;
};

// An upper bound of the parameter count: every projection of every layer at the widest of its
// kind, plus embedding and LM head. nullopt when a product overflows.
std::optional<int64_t> ParamsUpperBound(const ModelSpec& s) {
  const int64_t h = s.hidden_size;
  const auto q_width = CheckedMul(s.num_heads, s.head_dim);
  const auto kv_width = CheckedMul(s.num_kv_heads, s.head_dim);
  if (!q_width || !kv_width) return std::nullopt;
  int64_t attention_width = std::max(*q_width, *kv_width);
  if (s.mla) {
    const MlaSpec& m = *s.mla;
    const auto up = CheckedMul(s.num_heads, m.qk_nope_head_dim + m.qk_rope_head_dim + m.v_head_dim);
    if (!up) return std::nullopt;
    attention_width = std::max({attention_width, *up, m.q_lora_rank, m.kv_lora_rank});
  }
  // Q, K, V, O and, for MLA, the low-rank factors: at most 8 matrices of hidden x width, plus
  // the width x width up-projections.
  const auto projections = CheckedProduct({8, h, attention_width});
  const auto up_projections = CheckedMul(attention_width, attention_width);
  if (!projections || !up_projections) return std::nullopt;
  const auto attention = CheckedAdd(*projections, *up_projections);
  const int64_t experts = s.moe.num_experts + s.moe.num_shared_experts + 1;
  const int64_t ffn_width = std::max(
      {s.intermediate_size, s.moe.expert_intermediate_size, s.moe.shared_intermediate_size});
  const auto ffn = CheckedProduct({3, h, ffn_width, experts});
  if (!attention || !ffn) return std::nullopt;
  const auto per_layer = CheckedAdd(*attention, *ffn);
  const auto table = CheckedProduct({2, s.vocab_size, h});
  if (!per_layer || !table) return std::nullopt;
  const auto body = CheckedMul(*per_layer, std::max<int64_t>(1, s.num_layers()));
  if (!body) return std::nullopt;
  return CheckedAdd(*body, *table);
}

}  // namespace

Status CheckModelLimits(const ModelSpec& s, const std::string& source) {
  std::vector<Dimension> dims = {
      {"hidden_size", s.hidden_size, kMaxModelWidth},
      {"head_dim", s.head_dim, kMaxModelWidth},
      {"num_attention_heads", s.num_heads, kMaxModelHeads},
      {"num_key_value_heads", s.num_kv_heads, kMaxModelHeads},
      {"intermediate_size", s.intermediate_size, kMaxModelFfnWidth},
      {"vocab_size", s.vocab_size, kMaxModelVocab},
      {"num_hidden_layers", s.num_layers(), kMaxModelLayers},
      {"max_position_embeddings", s.max_position_embeddings, kMaxModelContext},
      {"number of experts", s.moe.num_experts, kMaxModelExperts},
      {"experts per token", s.moe.experts_per_token, kMaxModelExperts},
      {"shared experts", s.moe.num_shared_experts, kMaxModelExperts},
      {"expert intermediate size", s.moe.expert_intermediate_size, kMaxModelFfnWidth},
      {"shared expert intermediate size", s.moe.shared_intermediate_size, kMaxModelFfnWidth},
      {"n_group", s.moe.num_groups, kMaxModelExperts},
  };
  if (s.mla) {
    dims.push_back({"q_lora_rank", s.mla->q_lora_rank, kMaxModelWidth});
    dims.push_back({"kv_lora_rank", s.mla->kv_lora_rank, kMaxModelWidth});
    dims.push_back({"qk_nope_head_dim", s.mla->qk_nope_head_dim, kMaxModelWidth});
    dims.push_back({"qk_rope_head_dim", s.mla->qk_rope_head_dim, kMaxModelWidth});
    dims.push_back({"v_head_dim", s.mla->v_head_dim, kMaxModelWidth});
  }
  for (const LayerSpec& layer : s.layers) {
    if (layer.sliding_window > kMaxModelContext) {
      dims.push_back({"sliding_window", layer.sliding_window, kMaxModelContext});
      break;
    }
  }
  for (const Dimension& d : dims) {
    if (d.value < 0 || d.value > d.max) {
      return Error(
          fmt::format("{}: {} ({}) is outside the accepted range 0 to {}; check the "
                      "config",
                      source, d.key, d.value, d.max));
    }
  }
  const std::optional<int64_t> params = ParamsUpperBound(s);
  if (!params || static_cast<double>(*params) > kMaxModelParams) {
    return Error(
        fmt::format("{}: the model's dimensions (hidden_size {}, {} layers, {} experts) "
                    "give more than {:.0e} parameters; check the config",
                    source, s.hidden_size, s.num_layers(), s.moe.num_experts, kMaxModelParams));
  }
  return Status();
}

}  // namespace shardwise
