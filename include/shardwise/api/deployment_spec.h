// How a request names a deployment (DeploymentSpec: a layout, or prefill and decode pools with
// their workers and cluster), and how it becomes the Deployment value (deploy/deployment.h) the
// verbs serve. A deployment a command chose (plan's winner, recommend's answer) is saved in its
// --json as a DeploymentSpec with the cluster, model, options and workload it was chosen for
// (SavedDeployment, api/json.h), so `--deployment FILE` runs the very same deployment. Plain
// value types.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "shardwise/api/catalog.h"
#include "shardwise/api/options.h"
#include "shardwise/common/status.h"
#include "shardwise/deploy/deployment.h"
#include "shardwise/perf/options.h"

namespace shardwise::api {

struct DeploymentSpec {
  std::string layout;  // aggregated: the layout ("dp2tp4"); empty with no pools: the planner's
  std::string prefill_layout;  // disaggregated: both layouts
  std::string decode_layout;
  int64_t prefill_workers = 1;
  int64_t decode_workers = 1;
  std::string prefill_cluster;                       // empty: the request's cluster
  std::optional<int64_t> prefill_redundant_experts;  // unset: the options'
  std::string prefill_shared_experts;                // empty: the options'
  std::string kv_transfer = "after-prefill";         // or layer-by-layer
  // The EP exchange each pool runs when a planner chose it (unset: the options').
  std::optional<EpSetting> ep;
  std::optional<EpSetting> prefill_ep;

  static DeploymentSpec Aggregated(std::string layout) {
    DeploymentSpec spec;
    spec.layout = std::move(layout);
    return spec;
  }
  bool Disaggregated() const { return !prefill_layout.empty() || !decode_layout.empty(); }
  bool Empty() const { return layout.empty() && !Disaggregated(); }
};

// The spec of a deployment (the inverse of ResolveDeployment, EP exchanges included).
DeploymentSpec SpecOf(const Deployment& deployment);

// The deployment `spec` describes on `cluster` with `options`. An empty spec is an error here:
// the verbs that pick a layout themselves (simulate, price) call the planner first.
StatusOr<Deployment> ResolveDeployment(const Catalog& catalog, const ModelSpec& model,
                                       const ClusterSpec& cluster, const ServingOptions& options,
                                       const DeploymentSpec& spec);

}  // namespace shardwise::api
