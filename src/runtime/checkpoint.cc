#include "shardwise/runtime/checkpoint.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "shardwise/runtime/weights.h"

namespace shardwise {

std::vector<std::pair<std::string, std::vector<int64_t>>> CheckpointTensors(const ModelSpec& m) {
  std::vector<std::pair<std::string, std::vector<int64_t>>> t;
  const int64_t h = m.hidden_size, q = m.num_heads * m.head_dim, kv = m.num_kv_heads * m.head_dim;
  t.push_back({"model.embed_tokens.weight", {m.vocab_size, h}});
  for (int64_t i = 0; i < m.num_layers(); ++i) {
    auto name = [&](const std::string& rest) { return fmt::format("model.layers.{}.{}", i, rest); };
    t.push_back({name("input_layernorm.weight"), {h}});
    t.push_back({name("post_attention_layernorm.weight"), {h}});
    if (m.mla) {
      const MlaSpec& a = *m.mla;
      const int64_t qk = a.qk_nope_head_dim + a.qk_rope_head_dim;
      if (a.q_lora_rank > 0) {
        t.push_back({name("self_attn.q_a_proj.weight"), {a.q_lora_rank, h}});
        t.push_back({name("self_attn.q_a_layernorm.weight"), {a.q_lora_rank}});
        t.push_back({name("self_attn.q_b_proj.weight"), {m.num_heads * qk, a.q_lora_rank}});
      } else {
        t.push_back({name("self_attn.q_proj.weight"), {m.num_heads * qk, h}});
      }
      t.push_back(
          {name("self_attn.kv_a_proj_with_mqa.weight"), {a.kv_lora_rank + a.qk_rope_head_dim, h}});
      t.push_back({name("self_attn.kv_a_layernorm.weight"), {a.kv_lora_rank}});
      t.push_back({name("self_attn.kv_b_proj.weight"),
                   {m.num_heads * (a.qk_nope_head_dim + a.v_head_dim), a.kv_lora_rank}});
      t.push_back({name("self_attn.o_proj.weight"), {h, m.num_heads * a.v_head_dim}});
    } else {
      t.push_back({name("self_attn.q_proj.weight"), {q, h}});
      t.push_back({name("self_attn.k_proj.weight"), {kv, h}});
      t.push_back({name("self_attn.v_proj.weight"), {kv, h}});
      t.push_back({name("self_attn.o_proj.weight"), {h, q}});
    }
    if (m.qkv_bias) {
      t.push_back({name("self_attn.q_proj.bias"), {q}});
      t.push_back({name("self_attn.k_proj.bias"), {kv}});
      t.push_back({name("self_attn.v_proj.bias"), {kv}});
    }
    if (m.o_bias) t.push_back({name("self_attn.o_proj.bias"), {h}});
    if (m.attention_sinks) t.push_back({name("self_attn.sinks"), {m.num_heads}});
    if (m.qk_norm == QkNorm::kPerHead) {
      t.push_back({name("self_attn.q_norm.weight"), {m.head_dim}});
      t.push_back({name("self_attn.k_norm.weight"), {m.head_dim}});
    }
    auto mlp = [&](const std::string& prefix, const std::string& g, const std::string& u,
                   const std::string& d, int64_t inter) {
      t.push_back({name(prefix + g + ".weight"), {inter, h}});
      t.push_back({name(prefix + u + ".weight"), {inter, h}});
      t.push_back({name(prefix + d + ".weight"), {h, inter}});
    };
    if (!m.layers[i].moe()) {
      mlp("mlp.", "gate_proj", "up_proj", "down_proj", m.intermediate_size);
      continue;
    }
    if (m.architecture == "GptOssForCausalLM") {  // fused experts, stored [in, out]
      const int64_t e = m.moe.num_experts, ie = m.moe.expert_intermediate_size;
      t.push_back({name("mlp.router.weight"), {e, h}});
      t.push_back({name("mlp.router.bias"), {e}});
      t.push_back({name("mlp.experts.gate_up_proj"), {e, h, 2 * ie}});
      t.push_back({name("mlp.experts.gate_up_proj_bias"), {e, 2 * ie}});
      t.push_back({name("mlp.experts.down_proj"), {e, ie, h}});
      t.push_back({name("mlp.experts.down_proj_bias"), {e, h}});
      continue;
    }
    const bool mixtral = m.architecture == "MixtralForCausalLM";
    t.push_back({name(mixtral ? "block_sparse_moe.gate.weight" : "mlp.gate.weight"),
                 {m.moe.num_experts, h}});
    if (m.moe.router_score_bias)
      t.push_back({name("mlp.gate.e_score_correction_bias"), {m.moe.num_experts}});
    for (int64_t e = 0; e < m.moe.num_experts; ++e) {
      if (mixtral) {
        mlp(fmt::format("block_sparse_moe.experts.{}.", e), "w1", "w3", "w2",
            m.moe.expert_intermediate_size);
      } else {
        mlp(fmt::format("mlp.experts.{}.", e), "gate_proj", "up_proj", "down_proj",
            m.moe.expert_intermediate_size);
      }
    }
    if (m.moe.num_shared_experts > 0 && m.architecture == "DeepseekV3ForCausalLM") {
      mlp("mlp.shared_experts.", "gate_proj", "up_proj", "down_proj",
          m.moe.shared_intermediate_size * m.moe.num_shared_experts);
    } else if (m.moe.num_shared_experts > 0) {
      mlp("mlp.shared_expert.", "gate_proj", "up_proj", "down_proj",
          m.moe.shared_intermediate_size);
      if (m.moe.shared_expert_gate) t.push_back({name("mlp.shared_expert_gate.weight"), {1, h}});
    }
  }
  t.push_back({"model.norm.weight", {h}});
  if (!m.tie_word_embeddings) t.push_back({"lm_head.weight", {m.vocab_size, h}});
  return t;
}

Status WriteGeneratedCheckpoint(const ModelSpec& m, uint64_t seed, const std::string& dir,
                                int shards) {
  std::filesystem::create_directories(dir);
  const auto tensors = CheckpointTensors(m);
  std::unique_ptr<WeightSource> gen = GeneratedWeights(seed);
  std::vector<std::map<std::string, NamedTensor>> files(static_cast<size_t>(std::max(1, shards)));
  nlohmann::json index = {{"metadata", nlohmann::json::object()},
                          {"weight_map", nlohmann::json::object()}};
  for (size_t i = 0; i < tensors.size(); ++i) {
    const auto& [name, shape] = tensors[i];
    int64_t rows = 1;
    for (size_t d = 0; d + 1 < shape.size(); ++d) rows *= shape[d];
    const int64_t cols = shape.back();
    SW_ASSIGN_OR_RETURN(std::vector<float> data, gen->Read(name, rows, cols, {0, rows}, {0, cols}));
    const size_t f = i % files.size();
    files[f][name] = NamedTensor{shape, std::move(data)};
    index["weight_map"][name] =
        fmt::format("model-{:05d}-of-{:05d}.safetensors", f + 1, files.size());
  }
  if (files.size() == 1) return WriteSafetensors(dir + "/model.safetensors", files[0]);
  for (size_t f = 0; f < files.size(); ++f) {
    SW_RETURN_IF_ERROR(WriteSafetensors(
        fmt::format("{}/model-{:05d}-of-{:05d}.safetensors", dir, f + 1, files.size()), files[f]));
  }
  std::ofstream out(dir + "/model.safetensors.index.json");
  out << index.dump(2) << "\n";
  return out ? Status() : Error(fmt::format("{}: cannot write the index", dir));
}

}  // namespace shardwise
