#include "shardwise/api/launch.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "shardwise/deploy/estimate.h"

namespace shardwise::api {
namespace {

// What a pool of a deployment runs: both phases (aggregated), or one.
enum class PoolPhase { kBoth, kPrefill, kDecode };

emit::EpKernels KernelsOf(const std::optional<EpAlgorithm>& algorithm) {
  if (!algorithm) return emit::EpKernels::kEngineDefault;
  switch (*algorithm) {
    case EpAlgorithm::kNodeDedup:
      return emit::EpKernels::kDeepEpNormal;
    case EpAlgorithm::kLowLatency:
      return emit::EpKernels::kDeepEpLowLatency;
    case EpAlgorithm::kAuto:
    case EpAlgorithm::kFlat:
      break;
  }
  return emit::EpKernels::kEngineDefault;
}

emit::SpeculativeLaunch SpeculativeOf(const SpeculativeOptions& s) {
  using Method = emit::SpeculativeLaunch::Method;
  emit::SpeculativeLaunch out;
  out.draft_tokens = s.DraftTokens();
  switch (s.method) {
    case SpeculativeMethod::kNone:
      break;
    case SpeculativeMethod::kMtp:
      out.method = Method::kMtp;
      break;
    case SpeculativeMethod::kEagle:
      out.method = Method::kEagle;
      break;
    case SpeculativeMethod::kDraftModel:
      out.method = Method::kDraftModel;
      out.draft_model = emit::HuggingFaceRepo(s.draft_model->name);
      if (out.draft_model.empty()) out.draft_model = s.draft_model->name;
      break;
  }
  return out;
}

// One pool's launch settings, for a pool that runs `phase`. The engine caps sequences per
// attention rank (max_batch); an instance takes that times its attention-DP ranks. TensorRT-LLM's
// KV share is of the memory left after the weights, which the step model's memory estimate
// gives. The EP kernels are those the step model picked for each phase; a prefill or decode
// pool runs its own phase's in both.
emit::PoolLaunch PoolLaunchOf(const Pool& pool, const StepEstimate& e, PoolPhase phase) {
  emit::PoolLaunch launch;
  launch.layout = pool.layout;
  launch.workers = pool.workers;
  launch.max_num_seqs = std::max<int64_t>(1, pool.max_batch * pool.layout.AttentionDp());
  launch.max_batched_tokens = pool.perf.max_batched_tokens;
  launch.chunked_prefill = ChunksPrompts(pool.schedule);
  launch.async_scheduling = pool.perf.engine.engine == "vllm" && pool.Batch().plans_ahead;
  const double free_bytes = e.memory.hbm_bytes - e.memory.weight_bytes;
  const double kv_bytes = e.memory.usable_bytes - e.memory.weight_bytes -
                          e.memory.activation_bytes - e.memory.comm_buffer_bytes;
  launch.kv_free_fraction = free_bytes > 0 ? std::clamp(kv_bytes / free_bytes, 0.05, 0.95) : 0.9;
  launch.prefill_ep = KernelsOf(e.prefill.ep_algorithm);
  launch.decode_ep = KernelsOf(e.decode.ep_algorithm);
  if (phase == PoolPhase::kPrefill) launch.decode_ep = launch.prefill_ep;
  if (phase == PoolPhase::kDecode) launch.prefill_ep = launch.decode_ep;
  const EpSetting& ep = pool.perf.ep;
  launch.fp8_dispatch = ep.dispatch_dtype == Dtype::kFp8;
  launch.two_batch_overlap = ep.two_batch_overlap && pool.layout.ep > 1;
  // Prompts run eagerly and draft nothing: a prefill-only pool captures no decode graph and
  // runs no speculative decoding.
  if (phase != PoolPhase::kPrefill) {
    launch.cuda_graph_max_batch = static_cast<int64_t>(pool.perf.engine.cuda_graph_max_batch);
    launch.speculative = SpeculativeOf(pool.perf.speculative);
  }
  return launch;
}

// The context the engine accepts: the model's own (a request longer than the planned lengths
// is served, not refused), capped where one worker's KV cache holds less (the engines refuse to
// start with a context no worker can hold), and never below the planned request.
StatusOr<int64_t> MaxModelLen(const ModelSpec& model, const DeploymentEstimate& e,
                              const Workload& lengths, int64_t asked) {
  const int64_t planned = lengths.prompt_tokens + lengths.output_tokens;
  if (asked != 0) {
    if (asked < planned) {
      return FieldError("max_model_len",
                        fmt::format("`max_model_len` {} is below the planned request of {} "
                                    "tokens (prompt + output)",
                                    asked, planned));
    }
    if (model.max_position_embeddings > 0 && asked > model.max_position_embeddings) {
      return FieldError("max_model_len",
                        fmt::format("`max_model_len` {} is beyond {}'s context of {} tokens", asked,
                                    model.name, model.max_position_embeddings));
    }
    return asked;
  }
  int64_t context = model.max_position_embeddings > 0 ? model.max_position_embeddings : planned;
  for (const PoolEstimate& pool : e.pools) {
    const double kv_tokens = pool.one.memory.kv_capacity_tokens;
    if (kv_tokens > 0) context = std::min(context, static_cast<int64_t>(kv_tokens));
  }
  return std::max(context, planned);
}

// The engine profile family an emitted engine runs (Dynamo's and llm-d's workers are vLLM's).
std::string_view ProfileFamily(emit::Engine engine) {
  const bool vllm_workers = engine == emit::Engine::kDynamo || engine == emit::Engine::kDynamoK8s ||
                            engine == emit::Engine::kLlmD;
  return vllm_workers ? "vllm" : emit::EngineName(engine);
}

}  // namespace

StatusOr<std::string> ModelledEngine(std::string_view emit_engine) {
  SW_ASSIGN_OR_RETURN(const emit::Engine engine, emit::ParseEngine(emit_engine));
  return std::string(ProfileFamily(engine));
}

StatusOr<std::string> ServedModel(const std::string& model_arg, const std::string& hf_id) {
  std::string model = hf_id;
  if (model.empty()) model = emit::HuggingFaceRepo(model_arg);
  if (model.empty()) {
    const std::filesystem::path p(model_arg);
    model = p.filename() == "config.json" ? p.parent_path().string() : model_arg;
    if (model.empty()) model = ".";
  }
  const bool safe = std::all_of(model.begin(), model.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-' ||
           c == '/';
  });
  if (!safe || model.size() > 256) {
    return FieldError(
        "hf_id",
        fmt::format("the model the engine loads, '{}', must be a Hugging Face id or a path of "
                    "letters, digits and . _ - / (at most 256); name it with `hf_id`",
                    model.substr(0, 80)));
  }
  return model;
}

StatusOr<LaunchReport> Launch(std::string_view engine, const std::string& model_arg,
                              const ModelSpec& model, const Deployment& d, const Workload& lengths,
                              const LaunchOverrides& overrides) {
  LaunchReport rep;
  StatusOr<emit::Engine> which = emit::ParseEngine(engine);
  if (!which.ok()) return which.status().WithField("emit");
  rep.engine = *which;
  rep.name = d.ToString();
  SW_ASSIGN_OR_RETURN(const DeploymentEstimate estimate, EstimateDeployment(model, d, lengths));
  emit::LaunchInputs& in = rep.inputs;
  SW_ASSIGN_OR_RETURN(in.model, ServedModel(model_arg, overrides.hf_id));
  in.moe = model.is_moe();
  in.architecture = model.architecture;
  const PerfOptions& perf = d.decode().perf;
  in.weight_dtype = perf.weight_dtype;
  in.kv_dtype = perf.kv_dtype;
  in.gpu_memory_utilization = perf.gpu_memory_utilization;
  in.gpus_per_host = d.decode().cluster.GpusPerHost();
  in.profile = perf.engine.name;
  SW_ASSIGN_OR_RETURN(in.max_model_len,
                      MaxModelLen(model, estimate, lengths, overrides.max_model_len));
  in.pool = PoolLaunchOf(d.decode(), estimate.decode().at_batch,
                         d.disaggregated() ? PoolPhase::kDecode : PoolPhase::kBoth);
  if (d.disaggregated()) {
    in.prefill_pool = PoolLaunchOf(d.prefill(), estimate.prefill().one, PoolPhase::kPrefill);
  }
  SW_ASSIGN_OR_RETURN(rep.config, emit::MakeLaunchConfig(rep.engine, in));
  const std::string& modelled = perf.engine.name;
  const bool same_family = modelled.starts_with(ProfileFamily(rep.engine));
  if (same_family && !perf.engine.emit_matches) {
    rep.notes.push_back(fmt::format(
        "the deployment was modelled with the {} profile, whose runtime the {} launch written "
        "does not start (the profile's emit_matches is false): set `engine` to {} to model the "
        "one launched",
        modelled, emit::EngineName(rep.engine), ProfileFamily(rep.engine)));
  } else if (!same_family) {
    rep.notes.push_back(fmt::format(
        "the deployment was modelled with the {} profile; the {} launch carries its settings, but "
        "the engines schedule differently: set `engine` to {} to model the one launched",
        modelled, emit::EngineName(rep.engine), ProfileFamily(rep.engine)));
  }
  return rep;
}

nlohmann::json ToJson(const LaunchReport& rep) {
  const auto pool = [](const char* role, const emit::PoolLaunch& p) {
    return nlohmann::json{{"role", role},
                          {"layout", p.layout.ToString()},
                          {"workers", p.workers},
                          {"max_num_seqs", p.max_num_seqs},
                          {"max_batched_tokens", p.max_batched_tokens},
                          {"chunked_prefill", p.chunked_prefill},
                          {"prefill_ep", emit::EpKernelsName(p.prefill_ep)},
                          {"decode_ep", emit::EpKernelsName(p.decode_ep)},
                          {"two_batch_overlap", p.two_batch_overlap},
                          {"cuda_graph_max_batch", p.cuda_graph_max_batch},
                          {"speculative_draft_tokens", p.speculative.draft_tokens}};
  };
  nlohmann::json pools = nlohmann::json::array();
  if (rep.inputs.prefill_pool) {
    pools.push_back(pool("prefill", *rep.inputs.prefill_pool));
    pools.push_back(pool("decode", rep.inputs.pool));
  } else {
    pools.push_back(pool("aggregated", rep.inputs.pool));
  }
  nlohmann::json files = nlohmann::json::array();
  for (const emit::LaunchFile& f : rep.config.files) {
    files.push_back({{"name", f.name}, {"text", f.text}});
  }
  return {{"engine", emit::EngineName(rep.engine)},
          {"version", emit::EngineVersion(rep.engine)},
          {"deployment", rep.inputs.Disaggregated() ? "disaggregated" : "aggregated"},
          {"name", rep.name},
          {"model", rep.inputs.model},
          {"max_model_len", rep.inputs.max_model_len},
          {"pools", pools},
          {"files", files},
          {"notes", rep.notes}};
}

}  // namespace shardwise::api
