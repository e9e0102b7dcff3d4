#include "emit_options.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "shardwise/emit/launch_config.h"

namespace shardwise::cli {
namespace {

// A file we may replace: absent, or one shardwise wrote (its first lines say so).
bool OursOrAbsent(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return true;
  std::ifstream in(path);
  std::string head(512, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  return head.find("Written by shardwise") != std::string::npos ||
         head.find("Written by 'shardwise") != std::string::npos;
}

}  // namespace

void EmitOptions::AddTo(CLI::App* sub) {
  sub->add_option("--emit", engine,
                  "Write the launch command for an engine: vllm, sglang, trtllm or dynamo");
  sub->add_option("--emit-dir", dir, "Write the launch files into this directory (default: print)");
  sub->add_option("--emit-rank", rank, "Which ranked layout to emit (1 = the best)")
      ->capture_default_str();
}

Status EmitOptions::Validate(bool force_files) const {
  if (engine.empty()) {
    if (!dir.empty()) return Error("--emit-dir needs --emit ENGINE (vllm, sglang, trtllm, dynamo)");
    return Status();
  }
  SW_RETURN_IF_ERROR(emit::ParseEngine(engine).status());
  if (rank < 1 || rank > 1000) return Error("--emit-rank must be between 1 and 1000");
  if (!dir.empty() && !force_files) {
    for (const std::string& name : {"launch_" + engine + ".sh", std::string("trtllm_extra.yaml")}) {
      if (name == "trtllm_extra.yaml" && engine != "trtllm") continue;
      const std::filesystem::path path = std::filesystem::path(dir) / name;
      if (!OursOrAbsent(path)) {
        return Error(
            fmt::format("--emit-dir: {} exists and was not written by shardwise; "
                        "choose another directory or add --force",
                        path.string()));
      }
    }
  }
  return Status();
}

StatusOr<nlohmann::json> EmitOptions::Emit(const ModelSpec& model, const std::string& model_arg,
                                           const ClusterSpec& cluster, const PerfOptions& perf,
                                           const StepEstimate& e, bool print) const {
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
  SW_ASSIGN_OR_RETURN(emit::LaunchConfig config, emit::MakeLaunchConfig(which, in));

  nlohmann::json files = nlohmann::json::array();
  for (const emit::LaunchFile& f : config.files)
    files.push_back({{"name", f.name}, {"text", f.text}});
  const nlohmann::json out = {{"engine", emit::EngineName(which)},
                              {"version", emit::EngineVersion(which)},
                              {"layout", e.layout.ToString()},
                              {"files", files}};
  if (!dir.empty()) {
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) return Error(fmt::format("--emit-dir {}: cannot create it ({})", dir, ec.message()));
    for (const emit::LaunchFile& f : config.files) {
      const fs::path path = fs::path(dir) / f.name;
      if (!force && !OursOrAbsent(path)) {
        return Error(
            fmt::format("--emit-dir: {} exists and was not written by shardwise; "
                        "choose another directory or add --force",
                        path.string()));
      }
    }
    for (const emit::LaunchFile& f : config.files) {
      const fs::path path = fs::path(dir) / f.name;
      std::ofstream(path) << f.text;
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
