// The flags every command that serves a model shares, each group filling one of the API's plain
// request values (api/): the serving options (--engine, --dtype, the MoE and speculative flags),
// the cluster (--cluster, --nodes, --gpus, --profile, --usd-per-gpu-hour), the deployment
// (--layout, the disaggregated pools, --deployment FILE) and the SLOs. A flag means the same in
// every command.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "shardwise/api/replay.h"
#include "shardwise/api/saved.h"
#include "shardwise/common/status.h"

namespace shardwise::cli {

// True when `option` was given on the command line.
inline bool Given(const CLI::Option* option) { return option != nullptr && option->count() > 0; }

// True when any of `options` was given on the command line.
bool AnyGiven(const std::vector<CLI::Option*>& options);

struct ServingFlags {
  api::ServingOverrides values;
  std::vector<CLI::Option*> given;
  CLI::Option* engine = nullptr;  // --engine, also in `given`

  // `max_batch`: also --max-batch; `admission`: also --admission (simulate).
  void AddTo(CLI::App* sub, bool max_batch, bool admission = false);
};

struct ClusterFlags {
  api::ClusterRef values;
  CLI::Option* name = nullptr;  // --cluster
  CLI::Option* nodes = nullptr;
  CLI::Option* gpus = nullptr;
  CLI::Option* profile = nullptr;
  CLI::Option* price = nullptr;     // --usd-per-gpu-hour, where the command prices
  std::vector<CLI::Option*> given;  // the first four

  // `priced`: the command reports costs, so it takes --usd-per-gpu-hour.
  void AddTo(CLI::App* sub, bool priced);
};

// The cluster the flags name, a profile fitted on another cluster said so on stderr.
StatusOr<ClusterSpec> LoadClusterFlags(const ClusterFlags& flags);

struct DeploymentFlags {
  api::DeploymentSpec values;
  std::string file;  // --deployment FILE
  CLI::Option* layout = nullptr;
  std::vector<CLI::Option*> disaggregated;
  std::vector<CLI::Option*> workers = {nullptr, nullptr};  // --prefill-workers, --decode-workers

  // `layout_help` describes --layout for this command (its default, if any).
  void AddTo(CLI::App* sub, const std::string& layout_help);
  bool LayoutGiven() const { return layout != nullptr && *layout; }
};

struct SloFlags {
  api::SloRequest values;
  std::vector<CLI::Option*> given;

  void AddTo(CLI::App* sub, const std::string& what);
};

// --isl-dist, --osl-dist and --length-cv: how the lengths spread about --isl and --osl where
// the command simulates.
struct LengthSpreadFlags {
  api::LengthSpreadRequest values;  // its CV set only where --length-cv is given (Request())
  double length_cv = kDefaultLengthCv;
  CLI::Option* isl_dist = nullptr;
  CLI::Option* osl_dist = nullptr;
  CLI::Option* length_cv_option = nullptr;

  void AddTo(CLI::App* sub);
  api::LengthSpreadRequest Request() const;
};

// The lengths (--isl, --osl: `lengths`) and SLO flags given on the command line, for a replay
// (api/replay.h) that keeps them over the saved ones; with `spread`, its flags too.
api::GivenFields GivenOf(const std::vector<CLI::Option*>& lengths, const SloFlags& slo,
                         const LengthSpreadFlags* spread = nullptr);

// `status`, and for an error about a value the command line did not give while `deployment`'s
// file was replayed, that the value is the file's (the message names it as a flag).
Status FromReplay(const Status& status, const DeploymentFlags& deployment, const CLI::App& sub);

// A saved deployment (--deployment FILE) as the command's question: its model, cluster, options
// and deployment, unless the command line names them too (an error naming the flag); the
// workload, load and SLOs the command line gives override the saved ones.
StatusOr<std::optional<api::SavedDeployment>> LoadReplay(const DeploymentFlags& deployment,
                                                         const ServingFlags& serving,
                                                         const ClusterFlags& cluster,
                                                         CLI::Option* model);

}  // namespace shardwise::cli
