#include "emit_options.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "output_guard.h"
#include "shardwise/emit/launch_config.h"

namespace shardwise::cli {
namespace {

// A launch file we may replace without --force: absent, or one shardwise wrote (its first
// lines say so).
Status CheckLaunchFile(const std::filesystem::path& path, bool force) {
  return CheckOutputPath(path.string(), force, "launch file written by shardwise",
                         [](const std::string& content) {
                           const std::string head = content.substr(0, 512);
                           return head.find("Written by shardwise") != std::string::npos ||
                                  head.find("Written by 'shardwise") != std::string::npos;
                         });
}

// One pool's launch settings from its worker's estimate. TensorRT-LLM's KV share is of the
// memory left after the weights.
emit::PoolLaunch Pool(const StepEstimate& e, int64_t workers, int64_t max_num_seqs,
                      const PerfOptions& perf) {
  emit::PoolLaunch pool;
  pool.layout = e.layout;
  pool.workers = workers;
  pool.max_num_seqs = std::max<int64_t>(1, max_num_seqs);
  pool.max_batched_tokens = perf.max_batched_tokens;
  const double free_bytes = e.memory.hbm_bytes - e.memory.weight_bytes;
  const double kv_bytes = e.memory.usable_bytes - e.memory.weight_bytes -
                          e.memory.activation_bytes - e.memory.comm_buffer_bytes;
  pool.kv_free_fraction = free_bytes > 0 ? std::clamp(kv_bytes / free_bytes, 0.05, 0.95) : 0.9;
  return pool;
}

nlohmann::json PoolJson(const char* role, const emit::PoolLaunch& p) {
  return {{"role", role},
          {"layout", p.layout.ToString()},
          {"workers", p.workers},
          {"max_num_seqs", p.max_num_seqs},
          {"max_batched_tokens", p.max_batched_tokens}};
}

}  // namespace

void EmitOptions::AddTo(CLI::App* sub) {
  sub->add_option("--emit", engine,
                  "Write the launch commands for an engine: vllm, sglang, trtllm or dynamo");
  deployment_option =
      sub->add_option("--emit-deployment", deployment,
                      "Which deployment --emit writes: winner (the disaggregated prefill/decode "
                      "pools when they win), aggregated or disaggregated")
          ->check(CLI::IsMember({"winner", "aggregated", "disaggregated"}))
          ->capture_default_str();
  sub->add_option("--emit-dir", dir, "Write the launch files into this directory (default: print)");
  rank_option = sub->add_option("--emit-rank", rank,
                                "Emit this ranked aggregated layout (1 = the best); implies "
                                "--emit-deployment aggregated")
                    ->capture_default_str();
  // Hidden: earlier versions' flag, refused with its replacement named.
  sub->add_flag("--emit-disagg", removed_disagg, "")->group("");
}

Status EmitOptions::Validate(bool force_files) const {
  const bool rank_given = rank_option && *rank_option;
  if (removed_disagg) {
    return Error(
        "--emit-disagg is gone: plan now emits its own disaggregated deployment for every "
        "engine; use --emit-deployment disaggregated (or the default, winner)");
  }
  if (engine.empty()) {
    if (!dir.empty()) return Error("--emit-dir needs --emit ENGINE (vllm, sglang, trtllm, dynamo)");
    if (deployment_option && *deployment_option) {
      return Error("--emit-deployment needs --emit ENGINE (vllm, sglang, trtllm, dynamo)");
    }
    if (rank_given) return Error("--emit-rank needs --emit ENGINE (vllm, sglang, trtllm, dynamo)");
    return Status();
  }
  SW_ASSIGN_OR_RETURN(emit::Engine which, emit::ParseEngine(engine));
  if (rank < 1 || rank > 1000) return Error("--emit-rank must be between 1 and 1000");
  if (rank_given && deployment == "disaggregated") {
    return Error(
        "--emit-rank picks an aggregated layout; drop it to emit the disaggregated deployment");
  }
  if (!dir.empty()) {
    // Which files are written depends on the deployment chosen later: check them all.
    for (bool disaggregated : {false, true}) {
      for (const std::string& name : emit::LaunchFileNames(which, disaggregated)) {
        SW_RETURN_IF_ERROR(CheckLaunchFile(std::filesystem::path(dir) / name, force_files));
      }
    }
  }
  return Status();
}

StatusOr<EmitTarget> EmitOptions::Choose(const std::vector<PlanEntry>& ranked,
                                         const std::optional<DisaggPlanEntry>& disaggregated,
                                         bool disaggregated_wins, bool searched) const {
  const bool rank_given = rank_option && *rank_option;
  const bool want_disaggregated =
      deployment == "disaggregated" ||
      (deployment == "winner" && disaggregated_wins && disaggregated && !rank_given);
  if (want_disaggregated) {
    if (!disaggregated) {
      return Error(searched
                       ? "--emit-deployment disaggregated: plan found no prefill/decode split of "
                         "these GPUs that fits and meets the SLOs; emit the aggregated layout or "
                         "relax the SLOs"
                       : "--emit-deployment disaggregated needs plan's disaggregated search, which "
                         "--disagg off and --layout turn off");
    }
    return EmitTarget{nullptr, &*disaggregated};
  }
  if (rank > static_cast<int>(ranked.size())) {
    return Error(fmt::format("--emit-rank {}: only {} layouts were ranked (raise --top)", rank,
                             ranked.size()));
  }
  return EmitTarget{&ranked[static_cast<size_t>(rank - 1)].estimate, nullptr};
}

StatusOr<nlohmann::json> EmitOptions::Emit(const ModelSpec& model, const std::string& model_arg,
                                           const ClusterSpec& cluster, const PerfOptions& perf,
                                           const EmitTarget& target, bool print) const {
  SW_ASSIGN_OR_RETURN(emit::Engine which, emit::ParseEngine(engine));
  emit::LaunchInputs in;
  in.model = emit::HuggingFaceRepo(model_arg);
  if (in.model.empty()) {
    // A config.json path: engines load the checkpoint directory that holds it.
    const std::filesystem::path p(model_arg);
    in.model = p.filename() == "config.json" ? p.parent_path().string() : model_arg;
    if (in.model.empty()) in.model = ".";
  }
  in.moe = model.is_moe();
  in.weight_dtype = perf.weight_dtype;
  in.kv_dtype = perf.kv_dtype;
  in.gpu_memory_utilization = perf.gpu_memory_utilization;
  in.gpus_per_node = cluster.GpusPerNode();
  std::string name;
  nlohmann::json pools = nlohmann::json::array();
  if (const DisaggPlanEntry* d = target.disaggregated) {
    const Workload& w = d->prefill.workload;
    in.max_model_len = w.prompt_tokens + w.output_tokens;
    // A prefill worker packs whole prompts into each attention rank's token budget, as the
    // planner and the simulator run it.
    const Layout& pl = d->deployment.prefill.layout;
    const int64_t prompts = std::max<int64_t>(1, perf.max_batched_tokens / w.prompt_tokens);
    in.prefill_pool =
        Pool(d->prefill, d->deployment.prefill.workers, prompts * pl.AttentionDp(), perf);
    in.pool = Pool(d->decode, d->deployment.decode->workers, d->decode.workload.batch, perf);
    name = d->deployment.ToString();
    pools.push_back(PoolJson("prefill", *in.prefill_pool));
    pools.push_back(PoolJson("decode", in.pool));
  } else {
    const StepEstimate& e = *target.aggregated;
    in.max_model_len = e.workload.prompt_tokens + e.workload.output_tokens;
    in.pool = Pool(e, 1, e.workload.batch, perf);
    name = e.layout.ToString();
    pools.push_back(PoolJson("aggregated", in.pool));
  }
  SW_ASSIGN_OR_RETURN(emit::LaunchConfig config, emit::MakeLaunchConfig(which, in));

  nlohmann::json files = nlohmann::json::array();
  for (const emit::LaunchFile& f : config.files)
    files.push_back({{"name", f.name}, {"text", f.text}});
  const nlohmann::json out = {{"engine", emit::EngineName(which)},
                              {"version", emit::EngineVersion(which)},
                              {"deployment", in.Disaggregated() ? "disaggregated" : "aggregated"},
                              {"name", name},
                              {"pools", pools},
                              {"files", files}};
  if (!dir.empty()) {
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) return Error(fmt::format("--emit-dir {}: cannot create it ({})", dir, ec.message()));
    for (const emit::LaunchFile& f : config.files) {
      SW_RETURN_IF_ERROR(CheckLaunchFile(fs::path(dir) / f.name, force));
    }
    for (const emit::LaunchFile& f : config.files) {
      const fs::path path = fs::path(dir) / f.name;
      std::ofstream out(path, std::ios::trunc);
      out << f.text;
      out.close();
      if (!out) return Error(fmt::format("--emit-dir: cannot write {}", path.string()));
      if (f.name.ends_with(".sh")) {
        fs::permissions(path,
                        fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec,
                        fs::perm_options::add, ec);
      }
      if (print) std::cout << fmt::format("wrote {}\n", path.string());
    }
  } else if (print) {
    std::cout << fmt::format("\nlaunch {} with {} (--emit {}):\n\n", name,
                             emit::EngineVersion(which), engine);
    for (const emit::LaunchFile& f : config.files) {
      if (config.files.size() > 1) std::cout << fmt::format("--- {} ---\n", f.name);
      std::cout << f.text;
    }
  }
  return out;
}

}  // namespace shardwise::cli
