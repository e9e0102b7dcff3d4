#include "shardwise/train/engine.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <set>

#include "shardwise/catalog/embedded.h"
#include "shardwise/common/input_policy.h"
#include "shardwise/common/suggest.h"

namespace shardwise::train {

bool TrainEngine::Offers(ScheduleKind kind) const {
  return std::find(schedules.begin(), schedules.end(), kind) != schedules.end();
}

bool TrainEngine::OffersZero(int stage) const {
  return std::find(zero_stages.begin(), zero_stages.end(), stage) != zero_stages.end();
}

bool TrainEngine::OffersDtype(Dtype dtype) const {
  return std::find(dtypes.begin(), dtypes.end(), dtype) != dtypes.end();
}

std::string GemmRateKey(const TrainConfig& c) {
  if (c.dtype != Dtype::kFp8) return std::string(DtypeName(c.dtype));
  switch (c.fp8_recipe) {
    case Fp8Recipe::kDelayed:
    case Fp8Recipe::kCurrent:
      return "fp8-tensor";
    case Fp8Recipe::kBlockwise:
      return "fp8-block";
    case Fp8Recipe::kMxfp8:
      return "mxfp8";
  }
  return "fp8-tensor";
}

namespace {

constexpr const char* kDefaultGpu = "default";
constexpr const char* kRecipeKeys[] = {"bf16", "fp8-tensor", "fp8-block", "mxfp8"};

// Reads {"value": ..., "provenance": "measured|fitted|assumed", "source": "..."} entries of one
// JSON object, recording each source and provenance under `prefix` + key.
class FieldReader {
 public:
  FieldReader(const nlohmann::json& object, std::string where, std::string prefix, TrainEngine& e)
      : object_(object), where_(std::move(where)), prefix_(std::move(prefix)), engine_(e) {}

  bool Has(const std::string& key) const { return object_.contains(key); }
  const std::string& Where() const { return where_; }

  // Every entry of the object was read: a misspelt one would otherwise be ignored silently.
  Status NoOthers() const {
    std::vector<std::string> known;
    for (const auto& [key, provenance] : engine_.provenance) {
      if (key.starts_with(prefix_)) known.push_back(key.substr(prefix_.size()));
    }
    for (const auto& [key, value] : object_.items()) {
      if (std::find(known.begin(), known.end(), key) == known.end()) {
        return Error(fmt::format(
            "{}: {}", where_,
            UnknownNameMessage("training engine field", key, known, "remove it or fix its name")));
      }
    }
    return Status();
  }

  StatusOr<double> Number(const std::string& key, double lo, double hi) {
    SW_ASSIGN_OR_RETURN(const nlohmann::json* v, Value(key));
    if (!v->is_number() || !std::isfinite(v->get<double>()) || v->get<double>() < lo ||
        v->get<double>() > hi) {
      return Error(fmt::format("{}: '{}' must be a number in [{:g}, {:g}]", where_, key, lo, hi));
    }
    return v->get<double>();
  }

  StatusOr<std::string> Text(const std::string& key) {
    SW_ASSIGN_OR_RETURN(const nlohmann::json* v, Value(key));
    if (!v->is_string() || v->get<std::string>().empty()) {
      return Error(fmt::format("{}: '{}' must be a non-empty string", where_, key));
    }
    return v->get<std::string>();
  }

  // A JSON object value, for the entry's owner to read.
  StatusOr<const nlohmann::json*> Object(const std::string& key) {
    SW_ASSIGN_OR_RETURN(const nlohmann::json* v, Value(key));
    if (!v->is_object()) return Error(fmt::format("{}: '{}' must be an object", where_, key));
    return v;
  }

  StatusOr<bool> Bool(const std::string& key) {
    SW_ASSIGN_OR_RETURN(const nlohmann::json* v, Value(key));
    if (!v->is_boolean()) return Error(fmt::format("{}: '{}' must be true or false", where_, key));
    return v->get<bool>();
  }

 private:
  StatusOr<const nlohmann::json*> Value(const std::string& key) {
    if (!object_.contains(key)) {
      return Error(fmt::format(
          "{}: lacks '{}'; add {{\"value\": ..., \"provenance\": \"measured|fitted|assumed\", "
          "\"source\": \"...\"}}",
          where_, key));
    }
    const nlohmann::json& e = object_.at(key);
    if (!e.is_object() || !e.contains("value") || !e.contains("provenance") ||
        !e.contains("source") || !e.at("provenance").is_string() || !e.at("source").is_string() ||
        e.at("source").get<std::string>().empty()) {
      return Error(fmt::format(
          "{}: '{}' must be an object with \"value\", \"provenance\" and a non-empty \"source\"",
          where_, key));
    }
    auto p = ParseProvenance(e.at("provenance").get<std::string>());
    if (!p.ok()) return Error(fmt::format("{}: '{}': {}", where_, key, p.status().message()));
    engine_.provenance[prefix_ + key] = *p;
    engine_.sources[prefix_ + key] = e.at("source").get<std::string>();
    return &e.at("value");
  }

  const nlohmann::json& object_;
  std::string where_, prefix_;
  TrainEngine& engine_;
};

// The engine's numbers (and its reliability's), each with the range it may take, and switches.
template <typename Owner>
struct NumberField {
  const char* key;
  double Owner::*member;
  double lo, hi;
};
constexpr NumberField<TrainEngine> kNumbers[] = {
    {"attention_head_dim_overhead", &TrainEngine::attention_head_dim_overhead, 0, 1e4},
    {"hidden_tensors", &TrainEngine::hidden_tensors, 0, 1e3},
    {"rope_tensors", &TrainEngine::rope_tensors, 0, 1e3},
    {"score_tensors", &TrainEngine::score_tensors, 0, 1e3},
    {"moe_token_tensors", &TrainEngine::moe_token_tensors, 0, 1e3},
    {"clamped_glu_tensors", &TrainEngine::clamped_glu_tensors, 0, 1e3},
    {"clamped_glu_kernels", &TrainEngine::clamped_glu_kernels, 0, 1e3},
    {"backward_traffic_factor", &TrainEngine::backward_traffic_factor, 0, 10},
    {"kernels_attention", &TrainEngine::kernels_attention, 0, 1e4},
    {"kernels_dense_mlp", &TrainEngine::kernels_dense_mlp, 0, 1e4},
    {"kernels_moe", &TrainEngine::kernels_moe, 0, 1e4},
    {"kernels_per_expert", &TrainEngine::kernels_per_expert, 0, 1e3},
    {"kernels_per_fp8_cast", &TrainEngine::kernels_per_fp8_cast, 0, 100},
    {"backward_kernel_factor", &TrainEngine::backward_kernel_factor, 0, 10},
    {"host_sync_s", &TrainEngine::host_sync_s, 0, 1},
    {"grad_bytes_per_param", &TrainEngine::grad_bytes_per_param, 1, 8},
    {"grad_reduce_bytes_per_param", &TrainEngine::grad_reduce_bytes_per_param, 1, 8},
    {"optimizer_bytes_per_param", &TrainEngine::optimizer_bytes_per_param, 0, 1e3},
    {"ep_network_fraction", &TrainEngine::ep_network_fraction, 0.01, 1},
    {"overlap_compute_cost", &TrainEngine::overlap_compute_cost, 0, 1},
    {"workspace_bytes", &TrainEngine::workspace_bytes, 0, 1e12},
    {"usable_hbm_fraction", &TrainEngine::usable_hbm_fraction, 0.01, 1},
};
constexpr std::pair<const char*, bool TrainEngine::*> kSwitches[] = {
    {"flash_attention", &TrainEngine::flash_attention},
    {"sequence_parallel", &TrainEngine::sequence_parallel},
    {"dropout", &TrainEngine::dropout},
    {"cuda_graphs", &TrainEngine::cuda_graphs},
    {"overlap_grad_reduce", &TrainEngine::overlap_grad_reduce},
    {"overlap_param_gather", &TrainEngine::overlap_param_gather},
    {"overlap_tp_comm", &TrainEngine::overlap_tp_comm},
    {"overlap_ep_comm", &TrainEngine::overlap_ep_comm},
    {"overlap_pp_comm", &TrainEngine::overlap_pp_comm},
    {"ep_dispatch_dedup", &TrainEngine::ep_dispatch_dedup},
    {"ep_dispatch_dedup_token_drop", &TrainEngine::ep_dispatch_dedup_token_drop},
    {"fp8_param_gather", &TrainEngine::fp8_param_gather},
};
constexpr NumberField<Reliability> kReliability[] = {
    {"interruptions_per_gpu_hour", &Reliability::interruptions_per_gpu_hour, 0, 1},
    {"restart_s", &Reliability::restart_s, 0, 1e6},
    {"checkpoint_bytes_per_param", &Reliability::checkpoint_bytes_per_param, 0, 100},
    // A checkpoint takes time to write: at 0 B/s it would never finish (1 B/s at the least).
    {"checkpoint_write_bytes_per_s_per_gpu", &Reliability::checkpoint_write_bytes_per_s_per_gpu, 1,
     1e12},
};

// {"model": {"gpu": {"low": L, "high": H, "rows": N, "runs": "BF16"}}}: the range over each
// model's published runs on each GPU (one of `gpus`, the spread's) and what those runs were. An
// MoE model's runs are keyed by routing apart: "qwen3-30b-a3b dropless", "... token-drop".
StatusOr<std::vector<ModelGpuSpread>> ParseByModel(const nlohmann::json& value,
                                                   const std::vector<std::string>& gpus,
                                                   const std::string& where) {
  std::vector<ModelGpuSpread> out;
  for (const auto& [model, per_gpu] : value.items()) {
    if (!per_gpu.is_object()) {
      return Error(fmt::format("{}: '{}' must be an object of GPUs", where, Printable(model)));
    }
    // "qwen3-30b-a3b token-drop": an MoE model's runs of one routing.
    std::string name = model, routing;
    if (const size_t space = model.find(' '); space != std::string::npos) {
      name = model.substr(0, space);
      routing = model.substr(space + 1);
      if (name.empty() ||
          (routing != TrainConfig::kDropless && routing != TrainConfig::kTokenDrop)) {
        return Error(
            fmt::format("{}: '{}' qualifies a model's runs by routing: MODEL dropless "
                        "or MODEL token-drop",
                        where, Printable(model)));
      }
    }
    for (const auto& item : per_gpu.items()) {
      // Named, not structured, bindings: the lambda below captures them.
      const std::string gpu = item.key();
      const nlohmann::json& range = item.value();
      const std::string at = fmt::format("{}: {} on {}", where, model, gpu);
      if (std::find(gpus.begin(), gpus.end(), gpu) == gpus.end()) {
        return Error(fmt::format("{}: {}", at,
                                 UnknownNameMessage("GPU of the published runs", gpu, gpus,
                                                    "name one of measured_gpus")));
      }
      if (!range.is_object()) return Error(at + ": must be an object");
      for (const auto& [key, unused] : range.items()) {
        if (key != "low" && key != "high" && key != "rows" && key != "runs") {
          return Error(fmt::format("{}: unknown field '{}' (low, high, rows and runs)", at, key));
        }
      }
      const auto number = [&](const char* key, double lo, double hi) -> StatusOr<double> {
        if (!range.contains(key) || !range.at(key).is_number() ||
            !(range.at(key).get<double>() >= lo && range.at(key).get<double>() <= hi)) {
          return Error(fmt::format("{}: needs '{}', a number in [{:g}, {:g}]", at, key, lo, hi));
        }
        return range.at(key).get<double>();
      };
      ModelGpuSpread s{name, gpu, routing};
      SW_ASSIGN_OR_RETURN(s.ratio_low, number("low", 0.01, 100));
      SW_ASSIGN_OR_RETURN(s.ratio_high, number("high", 0.01, 100));
      SW_ASSIGN_OR_RETURN(const double rows, number("rows", 1, 1e6));
      if (s.ratio_low > s.ratio_high) return Error(at + ": 'low' must not exceed 'high'");
      if (rows != std::floor(rows)) return Error(at + ": 'rows' must be a whole number");
      s.rows = static_cast<int64_t>(rows);
      if (!range.contains("runs") || !range.at("runs").is_string() ||
          range.at("runs").get<std::string>().empty()) {
        return Error(at + ": needs 'runs', what the runs were (their precisions)");
      }
      s.runs = range.at("runs").get<std::string>();
      out.push_back(std::move(s));
    }
  }
  // A model's runs on a GPU are stated for every routing or per routing, not both.
  for (const ModelGpuSpread& a : out) {
    for (const ModelGpuSpread& b : out) {
      if (a.model == b.model && a.gpu == b.gpu && a.moe_routing.empty() && !b.moe_routing.empty()) {
        return Error(
            fmt::format("{}: {} on {} is stated both without a routing and as '{} {}'; "
                        "key each routing apart",
                        where, Printable(a.model), a.gpu, Printable(b.model), b.moe_routing));
      }
    }
  }
  return out;
}

// The optional spread of the engine's published runs: all four fields, or none (a profile no
// published run checks states none, and `train` then states no spread); with them, optionally,
// the range per model and GPU.
Status ParseMeasuredSpread(FieldReader& f, TrainEngine& e) {
  constexpr const char* kKeys[] = {"measured_ratio_p10", "measured_ratio_p90", "measured_on",
                                   "measured_gpus"};
  const auto given = std::count_if(std::begin(kKeys), std::end(kKeys),
                                   [&](const char* key) { return f.Has(key); });
  if (given == 0 && !f.Has("measured_by_model")) return Status();
  if (given < static_cast<std::ptrdiff_t>(std::size(kKeys))) {
    return Error(
        f.Where() +
        ": state all of measured_ratio_p10, measured_ratio_p90, measured_on and "
        "measured_gpus, or none (no published run checks the profile)" +
        std::string(f.Has("measured_by_model") ? "; measured_by_model needs all four" : ""));
  }
  MeasuredSpread m;
  SW_ASSIGN_OR_RETURN(m.ratio_p10, f.Number("measured_ratio_p10", 0.01, 100));
  SW_ASSIGN_OR_RETURN(m.ratio_p90, f.Number("measured_ratio_p90", 0.01, 100));
  if (m.ratio_p10 > m.ratio_p90) {
    return Error(f.Where() + ": 'measured_ratio_p10' must not exceed 'measured_ratio_p90'");
  }
  SW_ASSIGN_OR_RETURN(m.on, f.Text("measured_on"));
  SW_ASSIGN_OR_RETURN(const std::string gpus, f.Text("measured_gpus"));
  for (size_t start = 0; start <= gpus.size();) {
    const size_t comma = std::min(gpus.find(',', start), gpus.size());
    m.gpus.push_back(gpus.substr(start, comma - start));
    start = comma + 1;
  }
  if (f.Has("measured_by_model")) {
    SW_ASSIGN_OR_RETURN(const nlohmann::json* by_model, f.Object("measured_by_model"));
    SW_ASSIGN_OR_RETURN(m.by_model,
                        ParseByModel(*by_model, m.gpus, f.Where() + ": measured_by_model"));
  }
  e.measured = std::move(m);
  return Status();
}

Status ParseFields(FieldReader& f, TrainEngine& e) {
  for (const NumberField<TrainEngine>& n : kNumbers) {
    SW_ASSIGN_OR_RETURN(e.*(n.member), f.Number(n.key, n.lo, n.hi));
  }
  for (const NumberField<Reliability>& n : kReliability) {
    SW_ASSIGN_OR_RETURN(e.reliability.*(n.member), f.Number(n.key, n.lo, n.hi));
  }
  for (const auto& [key, member] : kSwitches) {
    SW_ASSIGN_OR_RETURN(e.*member, f.Bool(key));
  }
  SW_RETURN_IF_ERROR(ParseMeasuredSpread(f, e));
  for (Fp8Recipe r :
       {Fp8Recipe::kDelayed, Fp8Recipe::kCurrent, Fp8Recipe::kBlockwise, Fp8Recipe::kMxfp8}) {
    SW_ASSIGN_OR_RETURN(e.fp8_cast_bytes[r],
                        f.Number(fmt::format("fp8_cast_bytes_{}", Fp8RecipeName(r)), 0, 100));
  }
  return Status();
}

// One GPU's entry. The default entry states attention as a fraction of the GPU catalog's bf16
// GEMM fraction; a named GPU states its own fractions, or "like" another entry.
StatusOr<TrainGpuRates> ParseGpuRates(const nlohmann::json& entry, const std::string& gpu,
                                      const std::string& source, TrainEngine& e) {
  const std::string where = fmt::format("{}: gpus.{}", source, gpu);
  if (!entry.is_object()) return Error(where + " must be an object");
  FieldReader f(entry, where, fmt::format("gpus.{}.", gpu), e);
  TrainGpuRates r;
  SW_ASSIGN_OR_RETURN(r.host_s_per_kernel, f.Number("host_s_per_kernel", 0, 1));
  if (gpu == kDefaultGpu) {
    SW_ASSIGN_OR_RETURN(r.attention_forward_fraction,
                        f.Number("attention_forward_of_gemm", 0.01, 1));
    SW_ASSIGN_OR_RETURN(r.attention_backward_fraction,
                        f.Number("attention_backward_of_gemm", 0.01, 1));
    return r;
  }
  SW_ASSIGN_OR_RETURN(r.attention_forward_fraction,
                      f.Number("attention_forward_fraction", 0.01, 1));
  SW_ASSIGN_OR_RETURN(r.attention_backward_fraction,
                      f.Number("attention_backward_fraction", 0.01, 1));
  for (const char* key : kRecipeKeys) {
    std::string field = fmt::format("gemm_fraction_{}", key);
    std::replace(field.begin(), field.end(), '-', '_');
    if (!f.Has(field)) continue;
    SW_ASSIGN_OR_RETURN(r.gemm_fraction[key], f.Number(field, 0.01, 1));
  }
  if (!r.gemm_fraction.contains("bf16")) {
    return Error(where + " must state gemm_fraction_bf16");
  }
  return r;
}

Status ParseGpus(const nlohmann::json& json, const std::string& source, TrainEngine& e) {
  if (!json.contains("gpus") || !json.at("gpus").is_object() ||
      !json.at("gpus").contains(kDefaultGpu)) {
    return Error(fmt::format(
        "{}: 'gpus' must be an object with a \"default\" entry (and one per calibrated GPU)",
        source));
  }
  std::map<std::string, std::string> like;
  for (const auto& [gpu, entry] : json.at("gpus").items()) {
    if (entry.is_object() && entry.contains("like")) {
      if (!entry.at("like").is_string() || !entry.contains("source") ||
          !entry.at("source").is_string() || entry.at("source").get<std::string>().empty()) {
        return Error(fmt::format(
            "{}: gpus.{} must be {{\"like\": \"<gpu>\", \"source\": \"why they match\"}}", source,
            gpu));
      }
      like[gpu] = entry.at("like").get<std::string>();
      e.sources["gpus." + gpu] = entry.at("source").get<std::string>();
      continue;
    }
    SW_ASSIGN_OR_RETURN(e.gpus[gpu], ParseGpuRates(entry, gpu, source, e));
  }
  for (const auto& [gpu, other] : like) {
    if (!e.gpus.contains(other) || other == kDefaultGpu) {
      return Error(fmt::format("{}: gpus.{} is like '{}', which has no entry of its own", source,
                               gpu, other));
    }
    e.gpus[gpu] = e.gpus.at(other);
  }
  return Status();
}

StatusOr<std::vector<ScheduleKind>> ParseSchedules(const nlohmann::json& json,
                                                   const std::string& source) {
  if (!json.contains("schedules") || !json.at("schedules").is_array() ||
      json.at("schedules").empty()) {
    return Error(
        fmt::format("{}: 'schedules' must list 1f1b, interleaved and/or zero-bubble", source));
  }
  std::vector<ScheduleKind> out;
  for (const auto& s : json.at("schedules")) {
    const std::string name = s.is_string() ? s.get<std::string>() : s.dump();
    if (name == "1f1b") {
      out.push_back(ScheduleKind::k1F1B);
    } else if (name == "interleaved") {
      out.push_back(ScheduleKind::kInterleaved);
    } else if (name == "zero-bubble") {
      out.push_back(ScheduleKind::kZeroBubble);
    } else {
      return Error(fmt::format("{}: unknown schedule {}; use 1f1b, interleaved or zero-bubble",
                               source, name));
    }
  }
  return out;
}

// The optional "dtypes" (bf16, fp8) and "parallelisms" (dp, tp and pp always; cp, ep) lists.
Status ParseOffered(const nlohmann::json& json, const std::string& source, TrainEngine& e) {
  if (json.contains("dtypes")) {
    const nlohmann::json& list = json.at("dtypes");
    if (!list.is_array() || list.empty()) {
      return Error(
          fmt::format("{}: 'dtypes' must list the formats it trains in (bf16, fp8)", source));
    }
    e.dtypes.clear();
    for (const auto& d : list) {
      const std::string name = d.is_string() ? d.get<std::string>() : d.dump();
      const StatusOr<Dtype> dtype = ParseDtype(name);
      if (!dtype.ok() || (*dtype != Dtype::kBf16 && *dtype != Dtype::kFp8)) {
        return Error(fmt::format("{}: unknown dtype {} in 'dtypes'; use bf16 and/or fp8", source,
                                 Printable(name)));
      }
      e.dtypes.push_back(*dtype);
    }
  }
  if (json.contains("parallelisms")) {
    const nlohmann::json& list = json.at("parallelisms");
    if (!list.is_array()) {
      return Error(
          fmt::format("{}: 'parallelisms' must list dp, tp, pp and any of cp, ep", source));
    }
    std::set<std::string> names;
    for (const auto& p : list) {
      const std::string name = p.is_string() ? p.get<std::string>() : p.dump();
      if (name != "dp" && name != "tp" && name != "pp" && name != "cp" && name != "ep") {
        return Error(fmt::format(
            "{}: unknown parallelism {} in 'parallelisms'; use dp, tp, pp, cp and/or ep", source,
            Printable(name)));
      }
      names.insert(name);
    }
    if (!names.contains("dp") || !names.contains("tp") || !names.contains("pp")) {
      return Error(fmt::format("{}: 'parallelisms' must include dp, tp and pp", source));
    }
    e.context_parallel = names.contains("cp");
    e.expert_parallel = names.contains("ep");
  }
  return Status();
}

StatusOr<std::vector<int>> ParseZeroStages(const nlohmann::json& json, const std::string& source) {
  if (!json.contains("zero_stages") || !json.at("zero_stages").is_array() ||
      json.at("zero_stages").empty()) {
    return Error(
        fmt::format("{}: 'zero_stages' must list the ZeRO stages (0-3) it offers", source));
  }
  std::vector<int> out;
  for (const auto& z : json.at("zero_stages")) {
    if (!z.is_number_integer() || z.get<int>() < 0 || z.get<int>() > 3) {
      return Error(fmt::format("{}: zero_stages entries must be 0, 1, 2 or 3", source));
    }
    out.push_back(z.get<int>());
  }
  return out;
}

}  // namespace

TrainGpuRates TrainEngine::RatesOn(const GpuSpec& gpu) const {
  if (auto it = gpus.find(gpu.name); it != gpus.end()) return it->second;
  TrainGpuRates r = gpus.at(kDefaultGpu);
  const double bf16 = gpu.gemm_fraction.at(Dtype::kBf16);
  r.gemm_fraction["bf16"] = bf16;
  if (gpu.Supports(Dtype::kFp8)) {
    r.gemm_fraction["fp8-tensor"] =
        gpu.gemm_fraction.contains(Dtype::kFp8) ? gpu.gemm_fraction.at(Dtype::kFp8) : bf16;
  }
  r.attention_forward_fraction *= bf16;
  r.attention_backward_fraction *= bf16;
  return r;
}

std::vector<std::string> TrainEngine::GpusWithRate(const std::string& key) const {
  std::vector<std::string> out;
  for (const auto& [name, rates] : gpus) {
    if (name != kDefaultGpu && rates.gemm_fraction.contains(key)) out.push_back(name);
  }
  return out;
}

StatusOr<TrainEngine> ParseTrainEngine(const nlohmann::json& json, const std::string& source) {
  if (!json.is_object()) return Error(fmt::format("{}: expected a JSON object", source));
  TrainEngine e;
  if (!json.contains("name") || !json.at("name").is_string()) {
    return Error(fmt::format("{}: lacks a \"name\"", source));
  }
  e.name = json.at("name").get<std::string>();
  if (json.contains("description") && json.at("description").is_string()) {
    e.description = json.at("description").get<std::string>();
  }
  if (!json.contains("fields") || !json.at("fields").is_object()) {
    return Error(fmt::format(
        "{}: 'fields' must be an object of {{\"value\", \"provenance\", \"source\"}} entries",
        source));
  }
  FieldReader fields(json.at("fields"), source + ": fields", "", e);
  SW_RETURN_IF_ERROR(ParseFields(fields, e));
  SW_RETURN_IF_ERROR(fields.NoOthers());
  SW_RETURN_IF_ERROR(ParseGpus(json, source, e));
  SW_ASSIGN_OR_RETURN(e.schedules, ParseSchedules(json, source));
  SW_ASSIGN_OR_RETURN(e.zero_stages, ParseZeroStages(json, source));
  SW_RETURN_IF_ERROR(ParseOffered(json, source, e));
  return e;
}

std::vector<std::string> BuiltinTrainEngineNames() { return catalog::NamesIn("training"); }

StatusOr<TrainEngine> LoadTrainEngine(std::string_view name_or_path) {
  std::string source;
  const std::vector<std::string> names = BuiltinTrainEngineNames();
  SW_ASSIGN_OR_RETURN(
      nlohmann::json json,
      catalog::LoadEntry("training", name_or_path, "training engine",
                         fmt::format("built-in training engines: {}, or a path to a profile .json",
                                     fmt::join(names, ", ")),
                         source, &names));
  return ParseTrainEngine(json, source);
}

}  // namespace shardwise::train
