// The load a plan is ranked under, and what a layout does at it. Offline (no load given) each
// layout runs at its best batch, i.e. a closed loop of batch x replicas clients; `--concurrency
// N` is a closed loop of N clients (what vllm bench serve --max-concurrency, genai-perf and
// trtllm-bench measure); `--rate R` an open loop of R requests/s (Poisson). The operating point
// comes from the serving simulator on the same step table `simulate` uses, so plan and simulate
// cannot disagree by construction, only by the sample of requests. Replicas are identical, so one
// replica is simulated at its share of the load: a closed loop's clients stay balanced (simulate
// routes them to the least-loaded replica), and round-robin gives each replica every k-th
// arrival of an open loop. Pure.
#pragma once

#include <cstdint>
#include <optional>

#include "shardwise/common/status.h"
#include "shardwise/hw/cluster.h"
#include "shardwise/layout/deployment.h"
#include "shardwise/model/model_spec.h"
#include "shardwise/perf/step.h"

namespace shardwise {

struct PlanLoad {
  enum class Kind { kOffline, kConcurrency, kRate };
  Kind kind = Kind::kOffline;
  double value = 0;  // clients (kConcurrency) or requests per second (kRate)
};

struct LatencySummary {
  double mean_s = 0;
  double p50_s = 0;
  double p99_s = 0;
};

// The mean TTFT and TPOT of a closed loop at fixed lengths run again with its clients out of
// phase: output lengths spread by kOutOfPhaseOutputCv (sim/workload.h), as simulate's band does.
struct OutOfPhase {
  double ttft_s = 0;
  double tpot_s = 0;
};

struct OperatingPoint {
  double concurrency = 0;  // clients; for an open loop, the mean requests in flight (Little)
  double requests_per_s = 0;
  int64_t requests_simulated = 0;  // per replica
  LatencySummary ttft, tpot;
  double output_tokens_per_s = 0;  // all replicas
  double output_tokens_per_s_per_gpu = 0;
  double output_tokens_per_s_per_user = 0;
  std::optional<OutOfPhase> out_of_phase;  // the planner's reported --concurrency entries
  bool out_of_phase_failed = false;        // its spread requests did not fit the KV cache
};

// Requests one replica simulates for `clients_per_replica` closed-loop clients: ten per client
// (as benchmark runs send), at least 200.
int64_t ClosedLoopRequests(double clients_per_replica);

// Simulates `step`'s layout serving `workload`'s lengths at `load` (kOffline: `batch` clients
// per replica). `max_batch` caps the sequences each attention rank runs at once.
StatusOr<OperatingPoint> SimulateOperatingPoint(const ModelSpec& model, const ClusterSpec& cluster,
                                                const StepModel& step, const PerfOptions& perf,
                                                const Workload& workload, int64_t max_batch,
                                                const PlanLoad& load);

// The same closed loop (`load` a concurrency) with its clients out of phase. Errors as the
// lockstep loop's, and where the spread requests need more KV than a replica holds.
StatusOr<OutOfPhase> SimulateOutOfPhasePoint(const ModelSpec& model, const ClusterSpec& cluster,
                                             const StepModel& step, const PerfOptions& perf,
                                             const Workload& workload, int64_t max_batch,
                                             const PlanLoad& load);

// Simulates every worker of the disaggregated `deployment` (both pools on `cluster`) at `load`;
// kOffline runs `offline_clients` closed-loop clients. `prefill` and `decode` model one worker of
// each pool. Errors as BuildDisaggregatedServing's (a pool that does not fit, a decode pool that
// cannot hold what the prefill pool sends it).
StatusOr<OperatingPoint> SimulateDisaggregatedPoint(
    const ModelSpec& model, const ClusterSpec& cluster, const Deployment& deployment,
    const StepModel& prefill, const StepModel& decode, const PerfOptions& perf,
    const Workload& workload, int64_t max_batch, const PlanLoad& load, double offline_clients);

}  // namespace shardwise
