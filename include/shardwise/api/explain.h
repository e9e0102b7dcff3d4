// Explain: one deployment in detail, from the step model alone (no queue): each phase's time
// split into compute, memory, each communication and the pipeline bubble, TTFT and TPOT with
// their bands, throughput, memory per GPU; for a disaggregated deployment, both pools, the KV
// transfer and the worker balance. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "shardwise/api/catalog.h"
#include "shardwise/api/deployment_spec.h"
#include "shardwise/api/options.h"
#include "shardwise/api/saved.h"
#include "shardwise/common/status.h"
#include "shardwise/deploy/estimate.h"
#include "shardwise/perf/uncertainty.h"
#include "shardwise/price/energy.h"

namespace shardwise::api {

struct ExplainRequest {
  std::string model = "llama-3.1-70b";
  ClusterRef cluster;
  ServingOverrides serving;
  DeploymentSpec deployment = DeploymentSpec::Aggregated("tp8");
  int64_t batch = 32;      // sequences per replica, or per decode worker
  int64_t context = 2048;  // prompt length and decode KV length
  int64_t osl = 256;       // output tokens per request, for throughput
  // A replayed run's length spread: explain prices requests of the mean lengths, says so, and
  // keeps the spread in what it saves.
  LengthSpreadRequest lengths;
};

struct Explanation {
  ModelSpec model;
  ClusterSpec cluster;
  ServingOptions options;
  Deployment deployment;
  Workload workload;  // batch, context, OSL
  DeploymentEstimate estimate;
  PhaseUncertainty ttft_band, tpot_band;
  // Aggregated: where the TP and EP groups' traffic binds ("nvlink", "scale-out").
  std::string tp_link, ep_link;
  double experts_per_gpu = 0;
  double expert_placement_imbalance = 1;
  std::vector<std::string> notes;  // for the user: formats that run weight-only, a profile...
  SavedDeployment saved;

  // The step estimate the explanation is about: the aggregated layout at the batch, or the
  // decode worker at its batch (the prefill worker's one prompt is estimate.prefill().one).
  const StepEstimate& Step() const { return estimate.decode().at_batch; }
  // Prefill and decode pools serve the slower pool's requests/s, or the prefill workers' API
  // servers' where they tokenize fewer prompts a second (DeploymentEstimate's capacity).
  double ServedRequestsPerS() const;
  // Whether the API servers, tokenizing one prompt at a time each, pass fewer requests than the
  // GPUs serve (and so set OutputTokensPerS).
  bool FrontEndBinds() const;
  // The whole deployment's output tokens/s: the layout's at the batch (at most what its API
  // servers pass); prefill and decode pools serve ServedRequestsPerS() times the output length.
  double OutputTokensPerS() const;
  // Its GPUs at rated board power over those tokens (price/energy.h).
  double JoulesPerOutputToken() const {
    return JoulesPerToken(deployment.BoardPowerW(), OutputTokensPerS());
  }
};

StatusOr<Explanation> Explain(const Catalog& catalog, const ExplainRequest& request);

}  // namespace shardwise::api
