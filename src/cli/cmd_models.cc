// `shardwise models`: the model catalog with exact parameter, KV and weight accounting.
#include <fmt/format.h>

#include <algorithm>

#include "command.h"
#include "shardwise/api/json.h"
#include "shardwise/common/format.h"
#include "shardwise/model/accounting.h"
#include "shardwise/model/catalog.h"
#include "shardwise/report/table.h"

namespace shardwise::cli {
namespace {

struct ModelsOptions {
  std::string config;
  bool json = false;
};

// "GQA", "MLA+DSA", "GQA+45 linear", "GQA+108 mamba2".
std::string AttentionColumn(const ModelSpec& m) {
  std::string out(AttentionKindName(m.attention));
  if (m.indexer) out += "+DSA";
  if (m.num_recurrent_layers() > 0) {
    const MixerKind kind = std::find_if(m.layers.begin(), m.layers.end(), [](const LayerSpec& l) {
                             return l.recurrent();
                           })->mixer;
    out += fmt::format("+{} {}", m.num_recurrent_layers(),
                       kind == MixerKind::kMamba2 ? "mamba2" : "linear");
  }
  return out;
}

Status RunModels(const ModelsOptions& opts) {
  std::vector<ModelSpec> models;
  if (!opts.config.empty()) {
    SW_ASSIGN_OR_RETURN(ModelSpec m, LoadModel(opts.config));
    models.push_back(std::move(m));
  } else {
    SW_ASSIGN_OR_RETURN(models, LoadBuiltinModels());
  }
  if (opts.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const ModelSpec& m : models) out.push_back(api::ToJson(m));
    PrintJson(out);
    return Status();
  }
  Table table({"model", "architecture", "layers", "hidden", "heads/kv", "attn", "experts/top-k",
               "total", "active", "KV/token bf16", "state/seq", "weights bf16", "checkpoint"});
  table.SetLeftAligned({0, 1, 5, 12});
  for (const ModelSpec& m : models) {
    const ParamBreakdown p = CountParams(m);
    const std::string experts =
        m.is_moe()
            ? fmt::format(
                  "{}/{}{}", m.moe.num_experts, m.moe.experts_per_token,
                  m.moe.num_shared_experts ? fmt::format("+{}s", m.moe.num_shared_experts) : "")
            : "-";
    table.AddRow(
        {m.name, m.architecture, std::to_string(m.num_layers()), std::to_string(m.hidden_size),
         fmt::format("{}/{}", m.num_heads, m.num_kv_heads), AttentionColumn(m), experts,
         FormatCount(static_cast<double>(p.total)), FormatCount(static_cast<double>(p.active)),
         FormatBytes(KvBytesPerToken(m, Dtype::kBf16)),
         m.num_recurrent_layers() > 0 ? FormatBytes(StateBytesPerSequence(m)) : "-",
         FormatBytes(WeightBytes(m, Dtype::kBf16)),
         fmt::format("{} ({})", FormatBytes(NativeWeightBytes(m)), m.native_formats.Describe())});
  }
  std::cout << table.Render();
  std::cout
      << "\nactive: parameters one token touches, both embedding tables counted. KV/token:\n"
         "attention layers, before sliding windows cap them. state/seq: the fixed recurrent\n"
         "state of the linear-attention/SSM layers per sequence. attn: the attention layers'\n"
         "kind; +DSA = sparse top-k, +N linear / +N mamba2 = recurrent layers. 'Ns' = N\n"
         "shared experts. checkpoint: weight bytes in the published formats.\n";
  for (const ModelSpec& m : models) {
    for (const std::string& note : m.AllNotes()) std::cout << m.name << ": " << note << "\n";
  }
  return Status();
}

}  // namespace

void AddModelsCommand(CLI::App& app, Status& result) {
  auto opts = std::make_shared<ModelsOptions>();
  CLI::App* sub = app.add_subcommand(
      "models",
      "List the built-in models (or one config.json) with parameter counts, KV bytes\n"
      "per token and weight bytes.");
  sub->add_option("--config", opts->config,
                  "A Hugging Face config.json to describe instead of the catalog");
  sub->add_flag("--json", opts->json, "Print JSON (an array of objects) instead of a table");
  BindCommand(sub, opts, result, RunModels);
}

}  // namespace shardwise::cli
