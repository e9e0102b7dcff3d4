// The load a plan is ranked under, and what a deployment does at it. Offline (no load given)
// each layout runs at its best batch, i.e. a closed loop of batch x replicas clients;
// `concurrency` N is a closed loop of N clients (what vllm bench serve --max-concurrency,
// genai-perf and trtllm-bench measure); `rate` R an open loop of R requests/s (Poisson). The
// operating point comes from the one serving evaluation (sim/serving.h, Serve) that simulate,
// recommend and price run, at its steady state, so for one deployment and load they report the
// same numbers. Pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "shardwise/common/status.h"
#include "shardwise/deploy/deployment.h"
#include "shardwise/model/model_spec.h"
#include "shardwise/perf/step.h"
#include "shardwise/sim/serving.h"

namespace shardwise {

struct PlanLoad {
  enum class Kind { kOffline, kConcurrency, kRate };
  Kind kind = Kind::kOffline;
  double value = 0;  // clients (kConcurrency) or requests per second (kRate)
  // How the requests' lengths spread about the workload's (its means): fixed unless given.
  LengthSpread lengths;
};

// A simulated latency: its mean, percentiles, and the value its SLO judges.
struct LatencySummary {
  double mean_s = 0;
  double p50_s = 0;
  double p90_s = 0;
  double p99_s = 0;
  double max_s = 0;
  double at_slo_s = 0;  // at the SLO's percentile (or the mean)
};
LatencySummary Summarize(const Samples& samples, const Slo& slo);

struct OperatingPoint {
  double concurrency = 0;  // clients; for an open loop, the mean requests in flight (Little)
  double requests_per_s = 0;
  int64_t requests_simulated = 0;  // measured
  LatencySummary ttft, tpot;
  double output_tokens_per_s = 0;  // all replicas
  double output_tokens_per_s_per_gpu = 0;
  double output_tokens_per_s_per_user = 0;
  // The tokens/s the bill is spread over (ServingRun::BilledOutputTokensPerS) and its price.
  double billed_output_tokens_per_s = 0;
  double billed_output_tokens_per_s_per_gpu = 0;
  double usd_per_mtok_output = 0;
  double joules_per_output_token = 0;  // the GPUs at rated board power over the billed tokens
  bool overloaded = false;             // falls behind the offered rate
  bool meets_slo = false;              // within the SLOs at their percentile, keeping up, settled
  SteadyState steady;
  std::optional<OutOfPhase> out_of_phase;  // the planner's reported --concurrency entries
  bool out_of_phase_failed = false;        // its spread requests did not fit the KV cache
};

// What an overloaded run served of `offered` requests/s, for a message: "12.3", "under 1% of it"
// where the arrivals outran the window (a rate of millions per second is over before a request
// finishes, and would read "serves 0"), or "10.1, yet its queue still grows through the run"
// where the window kept up but the queue had not settled.
std::string ServedShare(double served_per_s, double offered_per_s);

// The scenario of `load` for requests of `workload`'s lengths (their means, spread as
// `load.lengths` says) under `slo`; offline, a closed loop of `offline_clients`.
Scenario LoadScenario(const Workload& workload, const PlanLoad& load, double offline_clients,
                      const Slo& slo);

// The operating point of a served run.
OperatingPoint Summarize(const ServingRun& run, const Deployment& deployment, const PlanLoad& load);

// Serves `deployment` (aggregated or disaggregated) at `load` (kOffline: `offline_clients`
// closed-loop clients) and summarizes it. Errors as Serve's.
StatusOr<OperatingPoint> SimulateOperatingPoint(const ModelSpec& model,
                                                const Deployment& deployment,
                                                const Workload& workload, const PlanLoad& load,
                                                double offline_clients, const Slo& slo);

// The same closed loop with its clients out of phase: the mean TTFT and TPOT with output
// lengths spread by kOutOfPhaseOutputCv. Errors as Serve's, and where the spread requests need
// more KV than a replica holds.
StatusOr<OutOfPhase> SimulateOutOfPhasePoint(const ModelSpec& model, const Deployment& deployment,
                                             const Workload& workload, const PlanLoad& load,
                                             double offline_clients);

}  // namespace shardwise
