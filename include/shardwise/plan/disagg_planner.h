// The planner's disaggregated search, as DistServe and NVIDIA AIConfigurator plan prefill/decode
// disaggregation: each pool's best worker layout for its own phase (prefill: the most requests
// per second per GPU within the TTFT SLO; decode: the most within the TPOT SLO, at the largest
// batch that meets it), then the worker counts (xPyD) that balance the two pools' request rates
// on the cluster's GPUs, and the KV transfer between them. Pure; single-threaded.
#pragma once

#include <optional>
#include <string>

#include "shardwise/common/status.h"
#include "shardwise/hw/cluster.h"
#include "shardwise/layout/deployment.h"
#include "shardwise/model/model_spec.h"
#include "shardwise/perf/kv_transfer.h"
#include "shardwise/perf/step.h"
#include "shardwise/plan/load.h"
#include "shardwise/plan/planner.h"

namespace shardwise {

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

}  // namespace shardwise
