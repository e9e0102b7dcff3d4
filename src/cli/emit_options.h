// plan's and recommend's --emit ENGINE, --emit-deployment winner|aggregated|disaggregated,
// --emit-rank N, --emit-dir DIR, --hf-id ID and --max-model-len N: the chosen deployment's launch
// files (api/launch.h), printed or written into a directory.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "shardwise/api/benchmark.h"
#include "shardwise/api/launch.h"
#include "shardwise/common/status.h"

namespace shardwise::cli {

// What --emit and --emit-benchmark make of an answer, made before anything is printed.
struct Emitted {
  std::optional<api::LaunchReport> launch;
  std::optional<api::BenchmarkReport> benchmark;
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
  bool removed_disagg = false;     // --emit-disagg, replaced by --emit-deployment (refused)

  // `choose`: the command picks among deployments (plan's --emit-deployment and --emit-rank).
  void AddTo(CLI::App* sub, bool choose);
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
  // Adds the launch's and benchmark's JSON (api/launch.h, api/benchmark.h) to `out` as "launch"
  // and "benchmark"; their files are written into --emit-dir, or printed when `print`.
  Status Write(const Emitted& emitted, nlohmann::json& out, bool print) const;
};

// simulate's --emit-benchmark TOOL, --emit-dir DIR and --hf-id ID: the benchmark that checks the
// simulation (api/benchmark.h), printed or written into a directory.
struct BenchmarkOptions {
  std::string tool;  // empty: none
  std::string dir;   // empty: print
  std::string hf_id;

  void AddTo(CLI::App* sub);
  // The tool's name, and that --emit-dir would not replace a user's file (unless `force`).
  Status Validate(bool force) const;
  bool Enabled() const { return !tool.empty(); }
  // The benchmark of `report` (before anything is printed: its errors are the user's input).
  StatusOr<api::BenchmarkReport> Make(const std::string& model_arg,
                                      const api::ServingReport& report) const;
  // `bench` printed (when `print`) or written; returns its JSON.
  StatusOr<nlohmann::json> Write(const api::BenchmarkReport& bench, bool print, bool force) const;
};

}  // namespace shardwise::cli
