// A deployment as a command's --json saves it: the question it answers (model, cluster, serving
// options, request lengths, load and SLOs) and the deployment itself (a DeploymentSpec, EP
// exchanges included). `--deployment FILE` reads it back from a saved plan, recommend, explain,
// simulate or price result and runs the very same deployment under the same scenario, so plan,
// simulate --deployment and price --deployment of plan's answer give the same numbers. Value
// types; JSON in docs/json.md ("deployment.saved").
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "shardwise/api/catalog.h"
#include "shardwise/api/deployment_spec.h"
#include "shardwise/api/options.h"
#include "shardwise/common/status.h"
#include "shardwise/plan/load.h"

namespace shardwise::api {

struct SavedDeployment {
  std::string command;  // the command that wrote it
  std::string model;    // as the request named it
  ClusterRef cluster;
  ServingOverrides serving;
  DeploymentSpec deployment;
  int64_t isl = 1024;
  int64_t osl = 256;
  // The load it was judged at: a rate, a closed loop, or (offline) a closed loop of this many
  // clients; none for explain.
  std::optional<double> rate;
  std::optional<int64_t> concurrency;
  // The mean requests in flight the simulation found at that load (Little's law), where it
  // ran one: explain of a saved rate explains the step at that batch.
  std::optional<double> in_flight;
  SloRequest slo;
  // How the requests were drawn: the length distributions (every serving command), and where
  // simulate generated them, the arrivals' burstiness, offline (every request at t = 0), the
  // seed and the router (the other commands serve Poisson arrivals, seed 1), so a replay draws
  // the very same requests.
  std::string trace;  // simulate --trace: the file (rate: its offered rate, for price and explain)
  LengthSpreadRequest lengths;
  std::optional<double> burstiness;
  bool offline = false;
  uint64_t seed = 1;
  std::string router;
};

// The record of `deployment` (its spec, EP exchanges included) for a question without a load
// (set rate, concurrency and slo after).
SavedDeployment Save(std::string command, std::string model, ClusterRef cluster,
                     ServingOverrides serving, const Deployment& deployment, int64_t isl,
                     int64_t osl);

nlohmann::json ToJson(const SavedDeployment& saved);
// Reads "deployment.saved" of a result (`source` names it in errors).
StatusOr<SavedDeployment> SavedDeploymentFromJson(const nlohmann::json& result,
                                                  const std::string& source);
// Reads a saved result file under the saved-plan input policy.
StatusOr<SavedDeployment> LoadSavedDeployment(const std::string& path);

// The reference that loads `sized`, the catalog cluster `name` scaled to its GPUs: whole nodes,
// or the first GPUs of one.
ClusterRef RefOf(const std::string& name, const ClusterSpec& sized);

}  // namespace shardwise::api
