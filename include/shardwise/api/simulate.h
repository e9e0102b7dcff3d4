// Simulate: a deployment under traffic in the discrete-event simulator (sim/serving.h, the one
// serving evaluation), at its steady state unless the request fixes the run: latency
// distributions with their bands, throughput, goodput under SLOs at a percentile, utilisation,
// MFU, KV occupancy and cost. Deterministic for a seed. Pure; thread-safe.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "shardwise/api/catalog.h"
#include "shardwise/api/deployment_spec.h"
#include "shardwise/api/options.h"
#include "shardwise/api/saved.h"
#include "shardwise/common/status.h"
#include "shardwise/price/energy.h"
#include "shardwise/sim/bands.h"
#include "shardwise/sim/serving.h"

namespace shardwise::api {

// Requests as a caller states them: generated lengths, or a trace file.
struct WorkloadRequest {
  int64_t isl = 1024;
  int64_t osl = 256;
  LengthSpreadRequest lengths;  // how they spread about isl and osl
  std::string trace;            // a CSV of arrival_s,input_tokens,output_tokens
};

struct SimulateRequest {
  std::string model = "llama-3.1-8b";
  ClusterRef cluster;
  ServingOverrides serving;
  DeploymentSpec deployment;  // empty: the planner's best aggregated layout for the lengths
  WorkloadRequest workload;
  std::optional<double> rate;          // requests/s (infinity: offline); unset: 10
  std::optional<int64_t> concurrency;  // a closed loop of this many clients instead
  std::optional<double> burstiness;    // CV of the gaps of an open loop; unset: 1 (Poisson)
  int64_t requests = 0;                // 0: as many as the steady state needs
  double duration_s = 0;               // 0: no cutoff
  uint64_t seed = 1;
  std::string router;  // round-robin or least-loaded; empty: least-loaded for a closed loop
  SloRequest slo;
  std::function<void(int64_t, double)> progress;  // (requests finished, simulated seconds)
};

struct ServingReport {
  ModelSpec model;
  ClusterSpec cluster;
  ServingOptions options;
  Deployment deployment;
  Scenario scenario;  // without its progress callback
  ServingRun run;
  LoadBands bands;
  bool layout_chosen = false;  // the planner picked the layout (none was given)
  SavedDeployment saved;
  std::vector<std::string> notes;
  double wall_s = 0;  // the simulation's own time, for the user

  double OutputTokensPerSPerGpu() const {
    return run.OutputTokensPerS() / static_cast<double>(deployment.gpus());
  }
  // Of the measured requests, the fraction that met both SLOs, and their output tokens/s
  // (scaled to every replica).
  double GoodputRequestFraction() const {
    const SimResult& r = run.result;
    return r.requests > 0 ? r.goodput_requests / static_cast<double>(r.requests) : 0.0;
  }
  double GoodputOutputTokensPerS() const { return run.GoodputOutputTokensPerS(); }
  // A closed loop's clients beyond the aggregated deployment's batch slots (max_batch per
  // attention rank, times the replicas): they wait, and their wait is in the TTFT. 0 for an
  // open loop or a disaggregated deployment.
  int64_t BatchSlots() const {
    const Pool& pool = deployment.prefill();
    return pool.Batch().max_batch * pool.Replicas();
  }
  int64_t ClientsBeyondBatchSlots() const {
    const auto* closed = std::get_if<ClosedLoop>(&scenario.load);
    if (closed == nullptr || deployment.disaggregated()) return 0;
    return std::max<int64_t>(0, closed->clients - BatchSlots());
  }
  // The deployment's GPUs at rated board power over the billed output tokens (as $/Mtok).
  double JoulesPerOutputToken() const {
    return JoulesPerToken(deployment.BoardPowerW(), run.BilledOutputTokensPerS());
  }
};

// How a simulation draws its requests beyond their mean lengths and load: price's length flags,
// and what a saved result replays in price.
struct RequestGenerator {
  LengthSpreadRequest lengths;
  std::optional<double> burstiness;  // an open loop's arrival-gap CV; unset: 1 (Poisson)
  std::string router;                // round-robin or least-loaded; empty: the scenario's default
};

// `s` (its mean lengths and load set) drawn as `g` says, validated by field.
Status DrawLike(const RequestGenerator& g, Scenario& s);

// The scenario a request describes (its lengths, load, SLOs, seed), validated by field.
StatusOr<Scenario> ResolveScenario(const SimulateRequest& request);

StatusOr<ServingReport> Simulate(const Catalog& catalog, const SimulateRequest& request);

}  // namespace shardwise::api
