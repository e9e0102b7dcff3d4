#include "shardwise/api/launch.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "shardwise/deploy/estimate.h"

namespace shardwise::api {
namespace {

// One pool's launch settings. The engine caps sequences per attention rank (max_batch); an
// instance takes that times its attention-DP ranks. TensorRT-LLM's KV share is of the memory
// left after the weights, which the step model's memory estimate gives.
emit::PoolLaunch PoolLaunchOf(const Pool& pool, const StepEstimate& e) {
  emit::PoolLaunch launch;
  launch.layout = pool.layout;
  launch.workers = pool.workers;
  launch.max_num_seqs = std::max<int64_t>(1, pool.max_batch * pool.layout.AttentionDp());
  launch.max_batched_tokens = pool.perf.max_batched_tokens;
  launch.chunked_prefill = ChunksPrompts(pool.schedule);
  const double free_bytes = e.memory.hbm_bytes - e.memory.weight_bytes;
  const double kv_bytes = e.memory.usable_bytes - e.memory.weight_bytes -
                          e.memory.activation_bytes - e.memory.comm_buffer_bytes;
  launch.kv_free_fraction = free_bytes > 0 ? std::clamp(kv_bytes / free_bytes, 0.05, 0.95) : 0.9;
  return launch;
}

// What the engine loads: a catalog model's Hugging Face repository, else the directory holding
// a config.json, else the name as given.
std::string EngineModel(const std::string& model_arg) {
  std::string repo = emit::HuggingFaceRepo(model_arg);
  if (!repo.empty()) return repo;
  const std::filesystem::path p(model_arg);
  std::string dir = p.filename() == "config.json" ? p.parent_path().string() : model_arg;
  return dir.empty() ? "." : dir;
}

// The context the engine accepts: the model's own (a request longer than the planned lengths
// is served, not refused), capped where one worker's KV cache holds less (the engines refuse to
// start with a context no worker can hold), and never below the planned request.
int64_t MaxModelLen(const ModelSpec& model, const DeploymentEstimate& e, const Workload& lengths) {
  const int64_t planned = lengths.prompt_tokens + lengths.output_tokens;
  int64_t context = model.max_position_embeddings > 0 ? model.max_position_embeddings : planned;
  for (const PoolEstimate& pool : e.pools) {
    const double kv_tokens = pool.one.memory.kv_capacity_tokens;
    if (kv_tokens > 0) context = std::min(context, static_cast<int64_t>(kv_tokens));
  }
  return std::max(context, planned);
}

// The engine profile family an emitted engine runs (Dynamo's workers are vLLM's).
std::string_view ProfileFamily(emit::Engine engine) {
  return engine == emit::Engine::kDynamo ? "vllm" : emit::EngineName(engine);
}

}  // namespace

StatusOr<LaunchReport> Launch(std::string_view engine, const std::string& model_arg,
                              const ModelSpec& model, const Deployment& d,
                              const Workload& lengths) {
  LaunchReport rep;
  StatusOr<emit::Engine> which = emit::ParseEngine(engine);
  if (!which.ok()) return which.status().WithField("emit");
  rep.engine = *which;
  rep.name = d.ToString();
  SW_ASSIGN_OR_RETURN(const DeploymentEstimate estimate, EstimateDeployment(model, d, lengths));
  emit::LaunchInputs& in = rep.inputs;
  in.model = EngineModel(model_arg);
  in.moe = model.is_moe();
  const PerfOptions& perf = d.decode().perf;
  in.weight_dtype = perf.weight_dtype;
  in.kv_dtype = perf.kv_dtype;
  in.gpu_memory_utilization = perf.gpu_memory_utilization;
  in.gpus_per_node = d.decode().cluster.GpusPerNode();
  in.max_model_len = MaxModelLen(model, estimate, lengths);
  in.pool = PoolLaunchOf(d.decode(), estimate.decode().at_batch);
  if (d.disaggregated()) in.prefill_pool = PoolLaunchOf(d.prefill(), estimate.prefill().one);
  SW_ASSIGN_OR_RETURN(rep.config, emit::MakeLaunchConfig(rep.engine, in));
  const std::string& modelled = perf.engine.name;
  if (!modelled.starts_with(ProfileFamily(rep.engine))) {
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
                          {"chunked_prefill", p.chunked_prefill}};
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
          {"pools", pools},
          {"files", files}};
}

}  // namespace shardwise::api
