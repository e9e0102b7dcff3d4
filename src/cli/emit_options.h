// What a command writes beside its answer: --emit ENGINE (the launch files of the chosen
// deployment, api/launch.h; plan also --emit-deployment winner|aggregated|disaggregated and
// --emit-rank N), --max-model-len N, --emit-benchmark TOOL (the client command that checks it,
// api/benchmark.h), --emit-dir DIR (write, else print) and --hf-id ID.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "html_output.h"
#include "shardwise/api/benchmark.h"
#include "shardwise/api/launch.h"
#include "shardwise/common/status.h"

namespace shardwise::cli {

// What --emit and --emit-benchmark make of an answer, made before anything is printed.
struct Emitted {
  std::optional<api::LaunchReport> launch;
  std::optional<api::BenchmarkReport> benchmark;
};

// Which emit flags a command takes.
enum class EmitScope {
  kBenchmark,  // simulate: --emit-benchmark of the run simulated
  kAnswer,     // recommend: --emit and --emit-benchmark of its answer
  kRanked,     // plan: those, and which of its deployments (--emit-deployment, --emit-rank)
};

struct EmitOptions {
  std::string engine;                 // empty: emit nothing
  std::string benchmark;              // --emit-benchmark TOOL; empty: none
  std::string deployment = "winner";  // winner, aggregated or disaggregated
  std::string dir;                    // empty: print to stdout
  int rank = 1;                       // which ranked aggregated layout (1 = the best)
  CLI::Option* rank_option = nullptr;
  CLI::Option* deployment_option = nullptr;
  CLI::Option* max_model_len_option = nullptr;
  api::LaunchOverrides overrides;  // --hf-id, --max-model-len
  bool force = false;              // replace files that are not shardwise's
  bool removed_disagg = false;
  std::string modelled_note;  // set by ModelTheLaunched where --emit changed the engine     //
                              // --emit-disagg, replaced by --emit-deployment (refused)
  EmitScope scope = EmitScope::kAnswer;

  void AddTo(CLI::App* sub, EmitScope scope);
  // --emit ENGINE without --engine (`engine_flag` not given): the answer is modelled with the
  // profile of the engine launched, written into `engine_profile`; Finish says so where that
  // changed it.
  void ModelTheLaunched(const CLI::Option* engine_flag, std::string& engine_profile);
  // Checks the engine name, deployment and rank, and that --emit-dir would not replace a user's
  // file (unless `force`), before any work.
  Status Validate(bool force) const;
  // --emit-rank when given.
  std::optional<int> Rank() const;
  bool Enabled() const { return !engine.empty(); }
  // --emit's launch of `deployment` (when given: the command's choice), its notes printed on
  // stderr, and --emit-benchmark's benchmark of the answer `saved`, simulated as
  // `simulate --deployment` runs it.
  StatusOr<Emitted> Make(const std::string& model_arg, const ModelSpec& model,
                         const Deployment* deployment, const Workload& lengths,
                         const api::SavedDeployment& saved) const;
  // simulate: --emit-benchmark's benchmark of the run `report`, simulated from `request`.
  StatusOr<Emitted> Make(const api::SimulateRequest& request,
                         const api::ServingReport& report) const;
  // The command's answer and what it emitted: the text (`print_text`) and then the launch and
  // benchmark files printed (or written into --emit-dir), or with --json the JSON `out` with
  // "launch" and "benchmark" added (api/launch.h, api/benchmark.h); then --html's page.
  Status Finish(const Emitted& emitted, nlohmann::json& out, bool json, const HtmlOptions& html,
                const std::function<void()>& print_text) const;
};

}  // namespace shardwise::cli
