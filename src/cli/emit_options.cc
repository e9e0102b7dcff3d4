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

}  // namespace

void EmitOptions::AddTo(CLI::App* sub) {
  sub->add_option("--emit", engine,
                  "Write the launch command for an engine: vllm, sglang, trtllm or dynamo");
  sub->add_option("--emit-dir", dir, "Write the launch files into this directory (default: print)");
  sub->add_option("--emit-rank", rank, "Which ranked layout to emit (1 = the best)")
      ->capture_default_str();
  sub->add_flag("--emit-disagg", disagg,
                "With --emit dynamo: disaggregated workers, decode on the emitted layout and "
                "prefill on the ranked layout with the lowest TTFT");
}

Status EmitOptions::Validate(bool force_files) const {
  if (engine.empty()) {
    if (!dir.empty()) return Error("--emit-dir needs --emit ENGINE (vllm, sglang, trtllm, dynamo)");
    if (disagg) return Error("--emit-disagg needs --emit dynamo");
    return Status();
  }
  SW_RETURN_IF_ERROR(emit::ParseEngine(engine).status());
  if (disagg && engine != "dynamo") {
    return Error(
        "--emit-disagg needs --emit dynamo (the engine emitted with disaggregated workers)");
  }
  if (rank < 1 || rank > 1000) return Error("--emit-rank must be between 1 and 1000");
  if (!dir.empty()) {
    SW_ASSIGN_OR_RETURN(emit::Engine which, emit::ParseEngine(engine));
    for (const std::string& name : emit::LaunchFileNames(which)) {
      SW_RETURN_IF_ERROR(CheckLaunchFile(std::filesystem::path(dir) / name, force_files));
    }
  }
  return Status();
}

StatusOr<nlohmann::json> EmitOptions::Emit(const ModelSpec& model, const std::string& model_arg,
                                           const ClusterSpec& cluster, const PerfOptions& perf,
                                           const StepEstimate& e, const StepEstimate* prefill,
                                           bool print) const {
  SW_ASSIGN_OR_RETURN(emit::Engine which, emit::ParseEngine(engine));
  emit::LaunchInputs in;
  in.model = emit::HuggingFaceRepo(model_arg);
  if (in.model.empty()) {
    // A config.json path: engines load the checkpoint directory that holds it.
    const std::filesystem::path p(model_arg);
    in.model = p.filename() == "config.json" ? p.parent_path().string() : model_arg;
    if (in.model.empty()) in.model = ".";
  }
  in.layout = e.layout;
  in.moe = model.is_moe();
  in.max_num_seqs = std::max<int64_t>(1, e.workload.batch);
  in.max_batched_tokens = perf.max_batched_tokens;
  in.max_model_len = e.workload.prompt_tokens + e.workload.output_tokens;
  in.weight_dtype = perf.weight_dtype;
  in.kv_dtype = perf.kv_dtype;
  in.gpu_memory_utilization = perf.gpu_memory_utilization;
  in.gpus_per_node = cluster.GpusPerNode();
  const double free_bytes = e.memory.hbm_bytes - e.memory.weight_bytes;
  const double kv_bytes = e.memory.usable_bytes - e.memory.weight_bytes -
                          e.memory.activation_bytes - e.memory.comm_buffer_bytes;
  in.kv_free_fraction = free_bytes > 0 ? std::clamp(kv_bytes / free_bytes, 0.05, 0.95) : 0.9;
  if (prefill) {
    in.prefill_layout = prefill->layout;
    in.prefill_max_num_seqs = std::max<int64_t>(1, prefill->workload.batch);
  }
  SW_ASSIGN_OR_RETURN(emit::LaunchConfig config, emit::MakeLaunchConfig(which, in));

  nlohmann::json files = nlohmann::json::array();
  for (const emit::LaunchFile& f : config.files)
    files.push_back({{"name", f.name}, {"text", f.text}});
  const nlohmann::json out = {
      {"engine", emit::EngineName(which)},
      {"version", emit::EngineVersion(which)},
      {"layout", e.layout.ToString()},
      {"prefill_layout",
       prefill ? nlohmann::json(prefill->layout.ToString()) : nlohmann::json(nullptr)},
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
    std::cout << fmt::format("\nlaunch {} with {} (--emit {}):\n\n", e.layout.ToString(),
                             emit::EngineVersion(which), engine);
    for (const emit::LaunchFile& f : config.files) {
      if (config.files.size() > 1) std::cout << fmt::format("--- {} ---\n", f.name);
      std::cout << f.text;
    }
  }
  return out;
}

}  // namespace shardwise::cli
