#include "shardwise/api/train.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "shardwise/api/json.h"
#include "shardwise/api/options.h"
#include "shardwise/common/input_policy.h"
#include "shardwise/train/json.h"

namespace shardwise::api {
namespace {

// An integer field's range, checked by name.
Status CheckRange(const char* field, int64_t value, int64_t low, int64_t high,
                  const std::string& what) {
  if (value >= low && value <= high) return Status();
  return FieldError(field, fmt::format("`{}` must be {}", field, what));
}

// The pipeline split asked for: Megatron's layout string, or first/last stage layer counts.
StatusOr<train::PipelineSplitRequest> SplitRequest(const TrainRunRequest& o) {
  train::PipelineSplitRequest r;
  const bool counts = o.first_stage_layers || o.last_stage_layers;
  if (!o.pipeline_layout.empty() && counts) {
    return FieldError("pipeline_layout",
                      "`pipeline_layout` places every layer itself; drop `first_stage_layers` "
                      "and `last_stage_layers`, or the layout");
  }
  if (!o.pipeline_layout.empty()) {
    r.kind = train::PipelineSplitRequest::Kind::kLayout;
    r.layout = o.pipeline_layout;
  } else if (counts) {
    r.kind = train::PipelineSplitRequest::Kind::kFirstLast;
    r.first_stage_layers = o.first_stage_layers.value_or(0);
    r.last_stage_layers = o.last_stage_layers.value_or(0);
    if (r.first_stage_layers < 0 || r.last_stage_layers < 0 ||
        (o.first_stage_layers && r.first_stage_layers == 0) ||
        (o.last_stage_layers && r.last_stage_layers == 0)) {
      return FieldError(o.first_stage_layers && r.first_stage_layers < 1 ? "first_stage_layers"
                                                                         : "last_stage_layers",
                        "`first_stage_layers` and `last_stage_layers` must be at least 1");
    }
  }
  return r;
}

// The searched knobs a request fixes: micro-batch, schedule, ZeRO stage, recompute.
Status FixKnobs(const TrainRunRequest& o, train::TrainRequest& req) {
  if (o.micro_batch) {
    SW_RETURN_IF_ERROR(CheckRange("micro_batch", *o.micro_batch, 1, o.global_batch,
                                  "between 1 and the global batch"));
    req.config.micro_batch = *o.micro_batch;
    req.search_micro_batch = false;
  }
  if (!o.schedule.empty()) {
    StatusOr<train::Schedule> schedule = train::ParseSchedule(o.schedule);
    if (!schedule.ok()) return schedule.status().WithField("schedule");
    req.config.schedule = *schedule;
    req.search_schedule = false;
  }
  if (o.zero) {
    SW_RETURN_IF_ERROR(CheckRange("zero", *o.zero, 0, 3, "0, 1, 2 or 3"));
    req.config.zero = *o.zero;
    req.search_zero = false;
  }
  if (!o.recompute.empty()) {
    const Status st = train::ParseRecompute(o.recompute, req.config);
    if (!st.ok()) return st.WithField("recompute");
    req.search_recompute = false;
  }
  return Status();
}

Status SetPrecision(const TrainRunRequest& o, train::TrainRequest& req) {
  StatusOr<Dtype> dtype = ParseDtype(o.dtype);
  if (!dtype.ok()) return dtype.status().WithField("dtype");
  if (*dtype == Dtype::kFp4 || *dtype == Dtype::kMxfp4) {
    return FieldError("dtype",
                      "FP4 (NVFP4, MXFP4) training is not modelled; set `dtype` to fp8 "
                      "or bf16");
  }
  if (*dtype != Dtype::kBf16 && *dtype != Dtype::kFp8) {
    return FieldError("dtype", "`dtype` must be bf16 or fp8 for training");
  }
  req.config.dtype = *dtype;
  StatusOr<train::Fp8Recipe> recipe = train::ParseFp8Recipe(o.fp8_recipe);
  if (!recipe.ok()) return recipe.status().WithField("fp8_recipe");
  if (*dtype != Dtype::kFp8 && o.fp8_recipe != TrainRunRequest().fp8_recipe) {
    return FieldError("fp8_recipe", fmt::format("`fp8_recipe` {} scales FP8 GEMMs: set `dtype` "
                                                "fp8, or drop it",
                                                o.fp8_recipe));
  }
  req.config.fp8_recipe = *recipe;
  return Status();
}

Status SetReliability(const TrainRunRequest& o, const train::TrainEngine& e,
                      train::TrainRequest& req) {
  req.reliability = e.reliability;
  if (o.interruption_rate) {
    if (!(*o.interruption_rate >= 0 && *o.interruption_rate <= 1)) {
      return FieldError("interruption_rate",
                        "`interruption_rate` must be between 0 and 1 per GPU-hour");
    }
    req.reliability.interruptions_per_gpu_hour = *o.interruption_rate;
  }
  if (o.restart_s) {
    if (!(*o.restart_s >= 0 && *o.restart_s <= 1e6)) {
      return FieldError("restart_s", "`restart_s` must be between 0 and 1,000,000 seconds");
    }
    req.reliability.restart_s = *o.restart_s;
  }
  return Status();
}

StatusOr<train::TrainRequest> MakeRequest(const TrainRunRequest& o, const train::TrainEngine& e) {
  train::TrainRequest req;
  SW_RETURN_IF_ERROR(
      CheckRange("seq_len", o.seq_len, 1, 10'000'000, "between 1 and 10,000,000 tokens"));
  SW_RETURN_IF_ERROR(CheckRange("global_batch", o.global_batch, 1, 100'000'000,
                                "between 1 and 100,000,000 sequences"));
  SW_RETURN_IF_ERROR(CheckRange("top", o.top, 1, 1000, "between 1 and 1000"));
  SW_RETURN_IF_ERROR(CheckRange("mtp_layers", o.mtp_layers, 0, 16, "0 to 16"));
  if (!(o.tokens >= 1 && o.tokens <= 1e18)) {
    return FieldError("tokens", "`tokens` must be a token count between 1 and 1e18");
  }
  req.config.seq_len = o.seq_len;
  req.config.global_batch = o.global_batch;
  req.config.moe_token_drop = o.moe_token_drop;
  req.config.mtp_layers = o.mtp_layers;
  SW_ASSIGN_OR_RETURN(req.config.split, SplitRequest(o));
  SW_RETURN_IF_ERROR(FixKnobs(o, req));
  SW_RETURN_IF_ERROR(SetPrecision(o, req));
  req.tokens = o.tokens;
  SW_RETURN_IF_ERROR(SetReliability(o, e, req));
  req.top = o.top;
  req.sizes = !o.no_sizes;
  if (!o.layout.empty()) {
    StatusOr<Layout> layout = ParseLayout(o.layout);
    if (!layout.ok()) return layout.status().WithField("layout");
    if (layout->GathersTokensForExperts()) {
      return FieldError("layout",
                        fmt::format("`layout` {}: training models expert-TP inside the TP group "
                                    "(tp above ep), not over attention DP (etp); drop etp",
                                    layout->ToString()));
    }
    req.only_layout = *layout;
  }
  return req;
}

// A GPU the engine states no rates for runs on the GPU catalog's GEMM fractions; where those are
// assumed too (borrowed from another part), nothing behind the prediction was measured on it.
std::string CalibrationNote(const train::TrainEngine& e, const GpuSpec& gpu) {
  if (e.Calibrates(gpu) || gpu.calibration_measured) return "";
  std::vector<std::string> calibrated;
  for (const auto& [name, rates] : e.gpus) {
    if (name != "default") calibrated.push_back(name);
  }
  return fmt::format(
      "{} states no training rates for {}{}; its GEMM rates are the GPU catalog's, assumed (not "
      "measured on this part, 'shardwise gpus'), so no measurement checks this prediction",
      e.name, gpu.name,
      calibrated.empty() ? "" : fmt::format(" (it does for {})", fmt::join(calibrated, ", ")));
}

std::optional<MeasuredBand> Band(const TrainReport& rep) {
  if (!rep.engine.measured || !rep.calibration_note.empty()) return std::nullopt;
  const train::MeasuredSpread& m = *rep.engine.measured;
  const train::TrainPlanEntry& best = rep.plan.ranked.front();
  MeasuredBand b;
  b.spread = m;
  b.on_this_gpu = std::find(m.gpus.begin(), m.gpus.end(), rep.cluster.gpu.name) != m.gpus.end();
  b.predicted_tokens_per_s_per_gpu = best.estimate.tokens_per_s_per_gpu;
  b.tokens_per_s_per_gpu_low = best.estimate.tokens_per_s_per_gpu * m.ratio_p10;
  b.tokens_per_s_per_gpu_high = best.estimate.tokens_per_s_per_gpu * m.ratio_p90;
  b.time_s_low = best.cost.time_s / m.ratio_p90;
  b.time_s_high = best.cost.time_s / m.ratio_p10;
  // An MoE model's runs of the routing trained here (those stating none stand for both).
  const std::string routing =
      rep.model.is_moe() ? std::string(rep.request.config.MoeRoutingName()) : std::string();
  for (const train::ModelGpuSpread& s : m.by_model) {
    if (s.model == rep.model.name && (s.moe_routing.empty() || s.moe_routing == routing)) {
      b.this_model.push_back(s);
    }
  }
  const auto here = std::find_if(b.this_model.begin(), b.this_model.end(),
                                 [&](const auto& s) { return s.gpu == rep.cluster.gpu.name; });
  if (here != b.this_model.end()) b.this_model = {*here};
  return b;
}

}  // namespace

StatusOr<TrainReport> Train(const Catalog& catalog, const TrainRunRequest& request) {
  TrainReport rep;
  SW_ASSIGN_OR_RETURN(rep.model, catalog.Model(request.model));
  for (const std::string& note : rep.model.notes) {
    rep.model_notes.push_back(fmt::format("{}: {}", rep.model.name, note));
  }
  if (request.moe_token_drop && !rep.model.is_moe()) return NeedsMoe(rep.model, "moe_token_drop");
  // (A learned position table is checked where the model is: it cannot be extended at all.)
  const int64_t context_tokens = rep.model.max_position_embeddings;
  if (context_tokens > 0 && request.seq_len > context_tokens &&
      rep.model.position_embeddings == 0) {
    return FieldError("seq_len",
                      fmt::format("`seq_len` {} exceeds {}'s context of {} tokens "
                                  "(max_position_embeddings); use a shorter `seq_len` or a model "
                                  "with a longer context",
                                  request.seq_len, rep.model.name, context_tokens));
  }
  if (rep.model.mtp_modules > 0 && request.mtp_layers == 0) {
    rep.model_notes.push_back(fmt::format(
        "{}: its config declares {} MTP module(s), not trained here; --mtp-layers {} trains them",
        rep.model.name, rep.model.mtp_modules, rep.model.mtp_modules));
  }
  if (rep.model.indexer) {
    rep.model_notes.push_back(fmt::format(
        "{}: attention is costed dense, as in DeepSeek Sparse Attention's dense warm-up stage; "
        "the indexer's sparse stage (top {} keys) is not modelled",
        rep.model.name, rep.model.indexer->topk));
  }
  SW_ASSIGN_OR_RETURN(rep.cluster, catalog.Cluster(request.cluster, &rep.cluster_note));
  StatusOr<train::TrainEngine> engine = train::LoadTrainEngine(request.engine);
  if (!engine.ok()) return engine.status().WithField("engine");
  rep.engine = *engine;
  // The published runs a profile states per model name catalog models (a misspelt one would
  // never be shown).
  if (rep.engine.measured) {
    for (const train::ModelGpuSpread& s : rep.engine.measured->by_model) {
      const StatusOr<ModelSpec> named = catalog.Model(s.model);
      if (!named.ok()) {
        return FieldError("engine", fmt::format("{}: measured_by_model names '{}', not a catalog "
                                                "model ('shardwise models')",
                                                rep.engine.name, Printable(s.model)));
      }
      // A routing qualifies an MoE model's runs only: a dense one's would never be shown.
      if (!s.moe_routing.empty() && !named->is_moe()) {
        return FieldError("engine",
                          fmt::format("{}: measured_by_model keys '{} {}', but {} is "
                                      "dense: name its runs '{}'",
                                      rep.engine.name, s.model, s.moe_routing, s.model, s.model));
      }
    }
  }
  rep.calibration_note = CalibrationNote(rep.engine, rep.cluster.gpu);
  SW_ASSIGN_OR_RETURN(rep.request, MakeRequest(request, rep.engine));
  const auto start = std::chrono::steady_clock::now();
  SW_ASSIGN_OR_RETURN(rep.plan,
                      train::PlanTraining(rep.model, rep.cluster, rep.engine, rep.request));
  rep.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  rep.band = Band(rep);
  return rep;
}

nlohmann::json ToJson(const TrainReport& rep) {
  nlohmann::json out = train::PlanJson(rep.plan);
  out["schema_version"] = kSchemaVersion;
  out["command"] = "train";
  out["model"] = rep.model.name;
  out["cluster"] = rep.cluster.name;
  out["cluster_gpus"] = rep.cluster.num_gpus;
  out["gpu"] = rep.cluster.gpu.name;
  out["usd_per_gpu_hour"] = rep.cluster.gpu.usd_per_gpu_hour;
  out["measured"] = nullptr;
  if (rep.band) {
    const MeasuredBand& b = *rep.band;
    out["measured"] = {
        {"on", b.spread.on},
        {"gpus", b.spread.gpus},
        {"on_this_gpu", b.on_this_gpu},
        {"ratio", {{"p10", b.spread.ratio_p10}, {"p90", b.spread.ratio_p90}}},
        {"tokens_per_s_per_gpu",
         {{"low", b.tokens_per_s_per_gpu_low}, {"high", b.tokens_per_s_per_gpu_high}}},
        {"time_s", {{"low", b.time_s_low}, {"high", b.time_s_high}}},
        {"this_model", nlohmann::json::array()}};
    for (const train::ModelGpuSpread& s : b.this_model) {
      out["measured"]["this_model"].push_back(
          {{"gpu", s.gpu},
           {"moe_routing",
            s.moe_routing.empty() ? nlohmann::json() : nlohmann::json(s.moe_routing)},
           {"rows", s.rows},
           {"runs", s.runs},
           {"ratio", {{"low", s.ratio_low}, {"high", s.ratio_high}}}});
    }
  }
  out["notes"] = rep.model_notes;
  for (const std::string& note : {rep.cluster_note, rep.calibration_note}) {
    if (!note.empty()) out["notes"].push_back(note);
  }
  out["engine"] = rep.engine.name;
  out["seq_len"] = rep.request.config.seq_len;
  out["global_batch"] = rep.request.config.global_batch;
  out["dtype"] = std::string(DtypeName(rep.request.config.dtype));
  out["moe_routing"] =
      rep.model.is_moe() ? nlohmann::json(rep.request.config.MoeRoutingName()) : nlohmann::json();
  out["mtp_layers"] = rep.request.config.mtp_layers;
  out["elapsed_s"] = rep.elapsed_s;
  return out;
}

}  // namespace shardwise::api
