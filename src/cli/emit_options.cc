#include "emit_options.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "command.h"
#include "output_guard.h"

namespace shardwise::cli {
namespace {

// `flag` given without what it serves: --emit (or, in simulate, --emit-benchmark).
Status NeedsEmit(std::string_view flag, EmitScope scope) {
  if (scope == EmitScope::kBenchmark) {
    return Error(fmt::format("{} needs --emit-benchmark TOOL (aiperf, vllm, sglang)", flag));
  }
  return Error(
      fmt::format("{} needs --emit ENGINE (vllm, sglang, trtllm, dynamo, dynamo-k8s, llm-d) or "
                  "--emit-benchmark TOOL",
                  flag));
}

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

// Writes `files` into `dir` (created if need be), after checking that none would replace a
// user's file; shell scripts become executable.
Status WriteFiles(const std::string& dir, const std::vector<emit::LaunchFile>& files, bool force,
                  bool print) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Error(fmt::format("--emit-dir {}: cannot create it ({})", dir, ec.message()));
  for (const emit::LaunchFile& f : files) {
    SW_RETURN_IF_ERROR(CheckLaunchFile(fs::path(dir) / f.name, force));
  }
  for (const emit::LaunchFile& f : files) {
    const fs::path path = fs::path(dir) / f.name;
    std::ofstream out(path, std::ios::trunc);
    out << f.text;
    out.close();
    if (!out) return Error(fmt::format("--emit-dir: cannot write {}", path.string()));
    if (f.name.ends_with(".sh")) {
      fs::permissions(path, fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec,
                      fs::perm_options::add, ec);
    }
    if (print) std::cout << fmt::format("wrote {}\n", path.string());
  }
  return Status();
}

constexpr const char* kBenchmarkHelp =
    "Write the benchmark that checks the answer: aiperf, vllm (vllm bench serve) or sglang "
    "(sglang.bench_serving), with the numbers it should see";

}  // namespace

void EmitOptions::AddTo(CLI::App* sub, EmitScope which) {
  scope = which;
  sub->add_option("--emit-benchmark", benchmark, kBenchmarkHelp);
  sub->add_option("--emit-dir", dir,
                  "Write the launch and benchmark files into this directory (default: print)");
  sub->add_option("--hf-id", overrides.hf_id,
                  "What the server loads: a Hugging Face id or local path (default: the catalog "
                  "model's repository, or the config.json's directory)");
  if (scope == EmitScope::kBenchmark) return;
  sub->add_option("--emit", engine,
                  "Write the launch commands for an engine (vllm, sglang, trtllm, dynamo) or the "
                  "Kubernetes manifest (dynamo-k8s: a DynamoGraphDeployment; llm-d: Helm values), "
                  "modelled with that engine's profile unless --engine names another");
  max_model_len_option = sub->add_option(
      "--max-model-len", overrides.max_model_len,
      "The longest request (prompt + output tokens) --emit's engine accepts "
      "(default: the model's context, capped where one worker's KV cache holds less)");
  // Hidden: earlier versions' flag, refused with its replacement named.
  sub->add_flag("--emit-disagg", removed_disagg, "")->group("");
  if (scope != EmitScope::kRanked) return;
  deployment_option =
      sub->add_option("--emit-deployment", deployment,
                      "Which deployment --emit writes: winner (the disaggregated prefill/decode "
                      "pools when they win), aggregated or disaggregated")
          ->check(CLI::IsMember({"winner", "aggregated", "disaggregated"}))
          ->capture_default_str();
  rank_option = sub->add_option("--emit-rank", rank,
                                "Emit this ranked aggregated layout (1 = the best); implies "
                                "--emit-deployment aggregated")
                    ->capture_default_str();
}

void EmitOptions::ModelTheLaunched(const CLI::Option* engine_flag, std::string& engine_profile) {
  if (engine.empty() || (engine_flag && *engine_flag)) return;
  // An unknown engine is Validate's error.
  if (StatusOr<std::string> family = api::ModelledEngine(engine); family.ok()) {
    if (*family != engine_profile) {
      modelled_note = fmt::format(
          "modelled with {}'s profile, the engine --emit launches (give --engine to model "
          "another)",
          *family);
    }
    engine_profile = *family;
  }
}

Status EmitOptions::Validate(bool force_files) const {
  const bool rank_given = rank_option && *rank_option;
  if (removed_disagg) {
    return Error(
        "--emit-disagg is gone: plan now emits its own disaggregated deployment for every "
        "engine; use --emit-deployment disaggregated (or the default, winner)");
  }
  if (!benchmark.empty()) {
    SW_ASSIGN_OR_RETURN(const emit::BenchmarkTool tool, emit::ParseBenchmarkTool(benchmark));
    if (!dir.empty()) {
      SW_RETURN_IF_ERROR(
          CheckLaunchFile(std::filesystem::path(dir) / emit::BenchmarkFileName(tool), force_files));
    }
  }
  if (engine.empty()) {
    if (!dir.empty() && benchmark.empty()) return NeedsEmit("--emit-dir", scope);
    if (deployment_option && *deployment_option) {
      return NeedsEmit("--emit-deployment", scope);
    }
    if (rank_given) return NeedsEmit("--emit-rank", scope);
    if (!overrides.hf_id.empty() && benchmark.empty()) {
      return NeedsEmit("--hf-id", scope);
    }
    if (max_model_len_option && *max_model_len_option) {
      return NeedsEmit("--max-model-len", scope);
    }
    return Status();
  }
  SW_ASSIGN_OR_RETURN(emit::Engine which, emit::ParseEngine(engine));
  if (rank < 1 || rank > 1000) return Error("--emit-rank must be between 1 and 1000");
  if (max_model_len_option && *max_model_len_option && overrides.max_model_len < 1) {
    return Error("--max-model-len must be a positive number of tokens (prompt + output)");
  }
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

std::optional<int> EmitOptions::Rank() const {
  if (rank_option && *rank_option) return rank;
  return std::nullopt;
}

StatusOr<Emitted> EmitOptions::Make(const std::string& model_arg, const ModelSpec& model,
                                    const Deployment* deployment, const Workload& lengths,
                                    const api::SavedDeployment& saved) const {
  Emitted out;
  if (Enabled() && deployment) {
    SW_ASSIGN_OR_RETURN(out.launch,
                        api::Launch(engine, model_arg, model, *deployment, lengths, overrides));
    PrintNotes(out.launch->notes);
  }
  if (!benchmark.empty()) {
    SW_ASSIGN_OR_RETURN(out.benchmark, api::BenchmarkSaved(api::Catalog::BuiltIn(), benchmark,
                                                           overrides.hf_id, saved));
  }
  return out;
}

StatusOr<Emitted> EmitOptions::Make(const api::SimulateRequest& request,
                                    const api::ServingReport& report) const {
  Emitted out;
  if (!benchmark.empty()) {
    SW_ASSIGN_OR_RETURN(out.benchmark, api::Benchmark(api::Catalog::BuiltIn(), benchmark,
                                                      overrides.hf_id, request, report));
  }
  return out;
}

Status EmitOptions::Finish(const Emitted& emitted, nlohmann::json& out, bool json,
                           const HtmlOptions& html, const std::function<void()>& print_text) const {
  const bool print = !json;
  if (!modelled_note.empty()) PrintNotes({modelled_note});
  if (print) print_text();
  if (emitted.launch) {
    const api::LaunchReport& launch = *emitted.launch;
    const emit::LaunchConfig& config = launch.config;
    if (!dir.empty()) {
      SW_RETURN_IF_ERROR(WriteFiles(dir, config.files, force, print));
    } else if (print) {
      std::cout << fmt::format("\nlaunch {} with {} (--emit {}):\n\n", launch.name,
                               emit::EngineVersion(launch.engine), engine);
      for (const emit::LaunchFile& f : config.files) {
        if (config.files.size() > 1) std::cout << fmt::format("--- {} ---\n", f.name);
        std::cout << f.text;
      }
    }
    out["launch"] = api::ToJson(launch);
  }
  if (emitted.benchmark) {
    const api::BenchmarkReport& bench = *emitted.benchmark;
    if (!dir.empty()) {
      SW_RETURN_IF_ERROR(WriteFiles(dir, {bench.file}, force, print));
    } else if (print) {
      std::cout << fmt::format("\nbenchmark with {} (--emit-benchmark {}):\n\n{}",
                               emit::BenchmarkToolVersion(bench.tool),
                               emit::BenchmarkToolName(bench.tool), bench.file.text);
    }
    out["benchmark"] = api::ToJson(bench);
  }
  if (json) PrintJson(out);
  return html.Write(out);
}

}  // namespace shardwise::cli
