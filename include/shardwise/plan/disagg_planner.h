// The planner's disaggregated search, as DistServe and NVIDIA AIConfigurator plan prefill/decode
// disaggregation: each pool's best worker layout for its own phase (prefill: the most requests
// per second per GPU within the TTFT SLO; decode: the most within the TPOT SLO, at the largest
// batch that meets it), then the worker counts (xPyD) that balance the two pools' request rates
// on the cluster's GPUs, and the KV transfer between them. Pure; single-threaded.
#pragma once

#include <optional>
#include <string>

#include "shardwise/common/status.h"
#include "shardwise/deploy/deployment.h"
#include "shardwise/hw/cluster.h"
#include "shardwise/model/model_spec.h"
#include "shardwise/perf/kv_transfer.h"
#include "shardwise/perf/step.h"
#include "shardwise/plan/load.h"
#include "shardwise/plan/planner.h"

namespace shardwise {

// A candidate worker of one pool: its layout and EP exchange, and what one worker does. A prefill
// worker's estimate is one prompt (TTFT) and its rate packs whole prompts into each attention
// rank's budget; a decode worker's is at the largest batch within the TPOT SLO (mean), its rate
// that batch over OSL decode steps.
struct PoolWorker {
  Layout layout;
  EpSetting ep;
  StepEstimate estimate;
  double requests_per_s_per_gpu = 0;
};

// One instance of each layout of `gpus` GPUs: no replicas inside a worker.
std::vector<Layout> WorkerLayouts(const ModelSpec& model, int64_t gpus, const PlanRequest& req);
// Adds the prefill and decode workers of `size` GPUs that fit and meet the request's SLOs
// (unloaded), each EP exchange the request tries.
void AddPoolWorkers(const ModelSpec& model, const ClusterSpec& cluster, const PlanRequest& req,
                    int64_t size, std::vector<PoolWorker>& prefill,
                    std::vector<PoolWorker>& decode);
// Keeps the `keep` workers with the most requests per second per GPU, best first.
void KeepBestWorkers(std::vector<PoolWorker>& workers, size_t keep);

struct DisaggPlanEntry {
  Deployment deployment;
  EpSetting prefill_ep;  // how each pool's MoE layers exchange tokens
  EpSetting decode_ep;
  StepEstimate prefill;  // one prompt on a prefill worker: TTFT, instance time per request
  StepEstimate decode;   // a decode worker at its batch
  KvLink link;
  KvTransfer transfer;
  double ttft_s = 0;  // unloaded: prefill plus the exposed KV transfer
  double tpot_s = 0;
  double prefill_requests_per_s = 0;  // the pool at full load
  double decode_requests_per_s = 0;   // the pool at its batch
  double output_tokens_per_s = 0;
  double output_tokens_per_s_per_gpu = 0;
  std::optional<OperatingPoint> at_load;  // simulated at the request's load
  std::string why;
};

// The best disaggregated deployment of the cluster's GPUs for the request's lengths, SLOs and
// objective (both pools on the cluster), simulated at the request's load; nullopt when no
// pair of worker layouts fits or meets the SLOs.
StatusOr<std::optional<DisaggPlanEntry>> PlanDisaggregated(const ModelSpec& model,
                                                           const ClusterSpec& cluster,
                                                           const PlanRequest& request);

// Which deployment plan answers with: the best aggregated entry or the disaggregated one
// (absent: aggregated wins), by what each does at the load (throughput per GPU, or TPOT at the
// SLO's percentile for the latency objective); a side that meets the SLOs beats one that does
// not, and the reason quotes both at the SLOs' percentile.
struct DeploymentVerdict {
  bool disaggregated_wins = false;
  std::string why;  // one line with both figures
};
// The verdict when no aggregated layout of the GPUs fits or meets the SLOs at the load and the
// split does.
DeploymentVerdict SplitAlone(const DisaggPlanEntry& split, const Slo& slo);
DeploymentVerdict CompareDeployments(const PlanEntry& aggregated,
                                     const std::optional<DisaggPlanEntry>& disaggregated,
                                     Objective objective, const Slo& slo);

// plan's answer from its two searches on `cluster`: the verdict and the deployment that wins.
// Where no aggregated layout is ranked a split answers alone; with neither, the aggregated
// search's reason (PlanResult::unranked) is the error.
struct PlanAnswer {
  DeploymentVerdict verdict;
  Deployment winner;
};
StatusOr<PlanAnswer> DecidePlan(const ModelSpec& model, const ClusterSpec& cluster,
                                const PlanRequest& request, const PlanResult& aggregated,
                                const std::optional<DisaggPlanEntry>& disaggregated);

}  // namespace shardwise
