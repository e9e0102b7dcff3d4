#include "shardwise/perf/engine.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <string_view>
#include <vector>

#include "shardwise/catalog/embedded.h"
#include "shardwise/common/json_fields.h"
#include "shardwise/common/suggest.h"

namespace shardwise {
namespace {

// The engines a profile can describe: a bare name is the newest built-in profile of one.
constexpr std::array<std::string_view, 3> kEngineKinds = {"trtllm", "vllm", "sglang"};

constexpr std::string_view kHint =
    "built-in engines: trtllm, vllm, sglang (each its newest version) or a versioned name such "
    "as vllm-0.12 (see data/engines/), or a path to a profile .json";

// One "fields" entry: {"value": ..., "provenance": "measured|fitted|assumed", "source": "..."}.
struct FieldReader {
  const nlohmann::json& fields;
  const std::string& source;
  EngineProfile& out;

  StatusOr<const nlohmann::json*> Entry(const std::string& key) {
    if (!fields.contains(key)) {
      return Error(
          fmt::format("{}: engine profile lacks field '{}'; add {{\"value\": ..., "
                      "\"provenance\": \"measured|fitted|assumed\", \"source\": \"...\"}}",
                      source, key));
    }
    const nlohmann::json& e = fields.at(key);
    if (!e.is_object() || !e.contains("value") || !e.contains("provenance") ||
        !e.contains("source") || !e.at("provenance").is_string() || !e.at("source").is_string() ||
        e.at("source").get<std::string>().empty()) {
      return Error(
          fmt::format("{}: field '{}' must be an object with \"value\", \"provenance\" "
                      "and a non-empty \"source\"",
                      source, key));
    }
    auto p = ParseProvenance(e.at("provenance").get<std::string>());
    if (!p.ok()) return Error(fmt::format("{}: field '{}': {}", source, key, p.status().message()));
    out.provenance[key] = *p;
    out.sources[key] = e.at("source").get<std::string>();
    return &e.at("value");
  }

  Status Number(const std::string& key, double& into, double lo, double hi) {
    SW_ASSIGN_OR_RETURN(const nlohmann::json* v, Entry(key));
    if (!v->is_number() || !std::isfinite(v->get<double>()) || v->get<double>() < lo ||
        v->get<double>() > hi) {
      return Error(
          fmt::format("{}: field '{}' must be a number in [{:g}, {:g}]", source, key, lo, hi));
    }
    into = v->get<double>();
    return Status();
  }

  // "<prefix>_p10" and "<prefix>_p90": positive ratios, the first no larger than the second.
  Status Ratios(const std::string& prefix, MeasuredRatios& into) {
    for (const char* suffix : {"_p10", "_p90"}) {
      if (!fields.contains(prefix + suffix)) {
        return Error(fmt::format(
            "{}: engine profile lacks field '{}{}', where measured closed loops fell around the "
            "predictions (measured / predicted; a value of 1 for both percentiles adds no spread "
            "to the bands)",
            source, prefix, suffix));
      }
    }
    constexpr double kMin = 1e-3, kMax = 1e3;  // a thousandfold miss is a broken entry
    SW_RETURN_IF_ERROR(Number(prefix + "_p10", into.p10, kMin, kMax));
    SW_RETURN_IF_ERROR(Number(prefix + "_p90", into.p90, kMin, kMax));
    if (into.p10 > into.p90) {
      return Error(
          fmt::format("{}: field '{}_p10' ({:g}) exceeds '{}_p90' ({:g}); the 10th "
                      "percentile cannot lie above the 90th",
                      source, prefix, into.p10, prefix, into.p90));
    }
    return Status();
  }

  // A count: a whole number in [lo, hi].
  Status Count(const std::string& key, double& into, double lo, double hi) {
    SW_RETURN_IF_ERROR(Number(key, into, lo, hi));
    if (into != std::floor(into)) {
      return Error(
          fmt::format("{}: field '{}' must be a whole number, got {:g}", source, key, into));
    }
    return Status();
  }

  // Every field of the file was read: a misspelt one would otherwise be ignored silently.
  Status NoOthers() const {
    std::vector<std::string> known;
    for (const auto& [key, provenance] : out.provenance) known.push_back(key);
    for (const auto& [key, value] : fields.items()) {
      if (!out.provenance.contains(key)) {
        return Error(fmt::format(
            "{}: {}", source,
            UnknownNameMessage("engine profile field", key, known, "remove it or fix its name")));
      }
    }
    return Status();
  }

  Status Text(const std::string& key, std::string& into) {
    SW_ASSIGN_OR_RETURN(const nlohmann::json* v, Entry(key));
    if (!v->is_string() || v->get<std::string>().empty())
      return Error(fmt::format("{}: field '{}' must be a non-empty string", source, key));
    into = v->get<std::string>();
    return Status();
  }

  Status Bool(const std::string& key, bool& into) {
    SW_ASSIGN_OR_RETURN(const nlohmann::json* v, Entry(key));
    if (!v->is_boolean())
      return Error(fmt::format("{}: field '{}' must be true or false", source, key));
    into = v->get<bool>();
    return Status();
  }

  Status Rule(const std::string& key, KvMemoryRule& into) {
    SW_ASSIGN_OR_RETURN(const nlohmann::json* v, Entry(key));
    const std::string text = v->is_string() ? v->get<std::string>() : "";
    if (text == "fraction_of_total") {
      into = KvMemoryRule::kFractionOfTotal;
    } else if (text == "fraction_of_free_after_weights") {
      into = KvMemoryRule::kFractionOfFreeAfterWeights;
    } else {
      return Error(
          fmt::format("{}: field '{}' must be \"fraction_of_total\" or "
                      "\"fraction_of_free_after_weights\"",
                      source, key));
    }
    return Status();
  }
};

}  // namespace

int64_t EngineTokenBudget(const EngineProfile& engine, int64_t mean_prompt_tokens,
                          int64_t longest_prompt_tokens) {
  if (engine.prompt_headroom_tokens <= 0) return static_cast<int64_t>(engine.max_batched_tokens);
  const double over_mean = static_cast<double>(mean_prompt_tokens) + engine.prompt_headroom_tokens;
  if (engine.prompt_headroom_over_mean) return static_cast<int64_t>(over_mean);
  // The longest prompt's, up to the engine's default budget: a longer prompt runs as its
  // iteration's only one (as the simulation runs it), where a budget set for the far tail of a
  // wide spread would let every iteration carry tens of thousands of tokens.
  const double over_longest =
      static_cast<double>(longest_prompt_tokens) + engine.prompt_headroom_tokens;
  return static_cast<int64_t>(
      std::max(over_mean, std::min(over_longest, engine.max_batched_tokens)));
}

std::vector<std::string> EngineProfile::AssumedFields() const {
  std::vector<std::string> out;
  for (const auto& [key, p] : provenance) {
    if (p == Provenance::kAssumed) out.push_back(key);
  }
  return out;
}

bool EngineProfile::ClosedLoopSpreadAssumed() const {
  const auto it = provenance.find("closed_loop_ttft_ratio_p10");
  return it != provenance.end() && it->second == Provenance::kAssumed;
}

StatusOr<EngineProfile> ParseEngineProfile(const nlohmann::json& json, const std::string& source) {
  if (!json.is_object()) return Error(source + ": an engine profile must be a JSON object");
  const JsonObject obj{json, source};
  EngineProfile e;
  SW_ASSIGN_OR_RETURN(e.name, obj.String("name"));
  SW_ASSIGN_OR_RETURN(e.engine, obj.String("engine"));
  if (std::find(kEngineKinds.begin(), kEngineKinds.end(), e.engine) == kEngineKinds.end()) {
    return Error(
        fmt::format("{}: \"engine\" is '{}'; it must be trtllm, vllm or sglang (whose "
                    "scheduler and launch flags the profile describes)",
                    source, e.engine));
  }
  SW_ASSIGN_OR_RETURN(e.version, obj.String("version"));
  if (json.contains("description") && json.at("description").is_string()) {
    e.description = json.at("description").get<std::string>();
  }
  if (!json.contains("fields") || !json.at("fields").is_object()) {
    return Error(source + ": engine profile lacks its \"fields\" object");
  }
  FieldReader r{json.at("fields"), source, e};
  constexpr double kHuge = 1e15;
  SW_RETURN_IF_ERROR(r.Number("step_overhead_s", e.step_overhead_s, 0, 1));
  SW_RETURN_IF_ERROR(r.Count("cuda_graph_max_batch", e.cuda_graph_max_batch, 0, 1e6));
  SW_RETURN_IF_ERROR(r.Number("host_launch_s_per_kernel", e.host_launch_s_per_kernel, 0, 1));
  SW_RETURN_IF_ERROR(r.Number("eager_host_s_per_layer", e.eager_host_s_per_layer, 0, 1));
  constexpr double kMaxKernels = 1000;  // per block; catches a misplaced field
  SW_RETURN_IF_ERROR(r.Number("kernels_per_attention", e.kernels.attention, 0, kMaxKernels));
  SW_RETURN_IF_ERROR(r.Number("kernels_per_dense_ffn", e.kernels.dense_ffn, 0, kMaxKernels));
  SW_RETURN_IF_ERROR(r.Number("kernels_per_moe_ffn", e.kernels.moe_ffn, 0, kMaxKernels));
  SW_RETURN_IF_ERROR(r.Number("kernels_per_qk_norm", e.kernels.qk_norm, 0, kMaxKernels));
  SW_RETURN_IF_ERROR(r.Number("kernels_per_fp8_gemm", e.kernels.per_fp8_gemm, 0, kMaxKernels));
  SW_RETURN_IF_ERROR(r.Count("custom_allreduce_max_bytes", e.custom_allreduce_max_bytes, 0, kHuge));
  SW_RETURN_IF_ERROR(r.Count("one_shot_max_bytes", e.one_shot_max_bytes, 0, kHuge));
  SW_RETURN_IF_ERROR(r.Number("custom_allreduce_latency_s", e.custom_allreduce_latency_s, 0, 1));
  SW_RETURN_IF_ERROR(r.Bool("fused_allreduce_norm", e.fused_allreduce_norm));
  SW_RETURN_IF_ERROR(r.Number("attention_efficiency", e.attention_efficiency, 0.01, 1));
  SW_RETURN_IF_ERROR(r.Count("max_batched_tokens", e.max_batched_tokens, 1, 1e7));
  SW_RETURN_IF_ERROR(r.Count("prompt_headroom_tokens", e.prompt_headroom_tokens, 0, 1e7));
  SW_RETURN_IF_ERROR(r.Count("max_num_seqs", e.max_num_seqs, 1, 1e6));
  SW_RETURN_IF_ERROR(r.Count("kv_block_tokens", e.kv_block_tokens, 1, 1e5));
  SW_RETURN_IF_ERROR(r.Rule("kv_memory_rule", e.kv_rule));
  SW_RETURN_IF_ERROR(r.Number("memory_fraction", e.memory_fraction, 0.01, 1));
  SW_RETURN_IF_ERROR(r.Count("runtime_reserve_bytes", e.runtime_reserve_bytes, 0, kHuge));
  SW_RETURN_IF_ERROR(r.Bool("no_evict_admission", e.no_evict_admission));
  SW_RETURN_IF_ERROR(r.Bool("mixed_prefill_decode", e.mixed_prefill_decode));
  SW_RETURN_IF_ERROR(r.Bool("chunked_prefill", e.chunked_prefill));
  SW_RETURN_IF_ERROR(r.Bool("overlap_scheduler", e.overlap_scheduler));
  SW_RETURN_IF_ERROR(r.Bool("context_parallel", e.context_parallel));
  SW_RETURN_IF_ERROR(r.Number("request_path_s", e.request_path_s, 0, 1));
  SW_RETURN_IF_ERROR(r.Number("tokenize_s_per_token", e.tokenize_s_per_token, 0, 1e-3));
  // Optional: a profile written before the field (a user's, or calibrate's from one) models the
  // runtime its engine's launch starts.
  if (json.at("fields").contains("emit_matches")) {
    SW_RETURN_IF_ERROR(r.Bool("emit_matches", e.emit_matches));
  }
  // Optional: a profile written before the field replays graphs for decode-only iterations.
  if (json.at("fields").contains("cuda_graph_prompts")) {
    SW_RETURN_IF_ERROR(r.Bool("cuda_graph_prompts", e.cuda_graph_prompts));
  }
  // Optional: a profile written before the field sets its headroom over the longest prompt.
  if (json.at("fields").contains("prompt_headroom_over_mean")) {
    SW_RETURN_IF_ERROR(r.Bool("prompt_headroom_over_mean", e.prompt_headroom_over_mean));
  }
  SW_RETURN_IF_ERROR(r.Ratios("closed_loop_ttft_ratio", e.closed_loop_ttft));
  SW_RETURN_IF_ERROR(r.Ratios("closed_loop_tpot_ratio", e.closed_loop_tpot));
  SW_RETURN_IF_ERROR(r.Text("closed_loop_measured_on", e.closed_loop_measured_on));
  SW_RETURN_IF_ERROR(r.NoOthers());
  return e;
}

std::vector<std::string> BuiltinEngineNames() {
  std::vector<std::string> names = catalog::NamesIn("engines");
  for (const std::string_view kind : kEngineKinds) names.emplace_back(kind);
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<int64_t> VersionNumbers(std::string_view version) {
  std::vector<int64_t> out;
  size_t i = 0;
  while (i < version.size() && std::isdigit(static_cast<unsigned char>(version[i]))) {
    int64_t part = 0;
    for (; i < version.size() && std::isdigit(static_cast<unsigned char>(version[i])); ++i) {
      part = std::min<int64_t>(part * 10 + (version[i] - '0'), 1'000'000'000);
    }
    out.push_back(part);
    if (i + 1 < version.size() && version[i] == '.') ++i;
  }
  return out;
}

StatusOr<EngineProfile> LoadEngine(std::string_view name_or_path) {
  std::string source;
  SW_ASSIGN_OR_RETURN(const nlohmann::json json, LoadEngineJson(name_or_path, source));
  return ParseEngineProfile(json, source);
}

StatusOr<nlohmann::json> LoadEngineJson(std::string_view name_or_path, std::string& source) {
  std::string name(name_or_path);
  // A bare engine name is its newest built-in version, compared number by number (0.18 after
  // 0.9).
  std::string newest;
  for (const std::string& n : catalog::NamesIn("engines")) {
    if (!n.starts_with(name + "-")) continue;
    if (newest.empty() || VersionNumbers(newest.substr(name.size() + 1)) <
                              VersionNumbers(n.substr(name.size() + 1))) {
      newest = n;
    }
  }
  if (!newest.empty()) name = newest;
  const std::vector<std::string> names = BuiltinEngineNames();  // short names suggested too
  return catalog::LoadEntry("engines", name, "engine", kHint, source, &names);
}

}  // namespace shardwise
