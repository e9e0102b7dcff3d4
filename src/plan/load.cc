#include "shardwise/plan/load.h"

#include <algorithm>
#include <cmath>

#include "shardwise/sim/serving.h"

namespace shardwise {
namespace {

LatencySummary Summary(const LogHistogram& h) {
  return {h.Mean(), h.Percentile(50), h.Percentile(99)};
}

RequestSource FixedLengths(const ArrivalSpec& arrivals, const Workload& w, int64_t requests) {
  return RequestSource(
      arrivals, {LengthDistribution::kFixed, static_cast<double>(w.prompt_tokens), 0},
      {LengthDistribution::kFixed, static_cast<double>(w.output_tokens), 0}, requests, 1);
}

// One replica of `step`'s layout at its share of `load`, the output lengths drawn from `output`.
struct ReplicaRun {
  SimResult result;
  double replicas = 0;
  int64_t clients = 0;  // per replica, in a closed loop
};

StatusOr<ReplicaRun> RunReplica(const ModelSpec& model, const ClusterSpec& cluster,
                                const StepModel& step, const PerfOptions& perf,
                                const Workload& workload, int64_t max_batch, const PlanLoad& load,
                                const LengthSpec& output) {
  const Layout& layout = step.layout();
  const StepEstimate probe = step.Estimate(workload);
  if (!probe.memory.Fits()) return Error(layout.ToString() + " does not fit in memory");
  const double replicas = static_cast<double>(layout.Replicas());
  const Admission admission =
      perf.engine.no_evict_admission ? Admission::kNoEvict : Admission::kMaxUtilization;
  SimConfig config =
      ServingConfig(cluster, layout, perf, probe.memory.kv_capacity_tokens, max_batch, admission);
  config.replicas = 1;
  ArrivalSpec arrivals{std::numeric_limits<double>::infinity(), 1.0};
  int64_t requests = 0;
  switch (load.kind) {
    case PlanLoad::Kind::kOffline:
      config.concurrency = workload.batch;
      requests = ClosedLoopRequests(static_cast<double>(workload.batch));
      break;
    case PlanLoad::Kind::kConcurrency:
      config.concurrency =
          std::max<int64_t>(1, static_cast<int64_t>(std::ceil(load.value / replicas)));
      requests = ClosedLoopRequests(static_cast<double>(config.concurrency));
      break;
    case PlanLoad::Kind::kRate:
      // Round-robin hands each replica every k-th arrival of the Poisson stream: Erlang-k
      // gaps, a gamma renewal process with CV 1 / sqrt(k).
      arrivals.rate_per_s = load.value / replicas;
      arrivals.burstiness_cv = 1.0 / std::sqrt(replicas);
      requests = 1000;
      break;
  }
  SW_ASSIGN_OR_RETURN(StepTable table,
                      ServingTable(step, perf, probe.memory.max_sequences, max_batch,
                                   workload.prompt_tokens + workload.output_tokens));
  RequestSource source(arrivals,
                       {LengthDistribution::kFixed, static_cast<double>(workload.prompt_tokens), 0},
                       output, requests, 1);
  SW_ASSIGN_OR_RETURN(SimResult r, Simulate(model, table, source, config));
  return ReplicaRun{std::move(r), replicas, config.concurrency};
}

// The operating point of a run that stands for `scale` identical copies of what it simulated
// (replicas simulated one for all) on `gpus` GPUs in all, with `clients` closed-loop clients.
OperatingPoint Summarize(const SimResult& r, const PlanLoad& load, double scale, double gpus,
                         double clients) {
  OperatingPoint p;
  p.requests_simulated = r.requests;
  p.ttft = Summary(r.ttft_s);
  p.tpot = Summary(r.tpot_s);
  p.requests_per_s = r.makespan_s > 0 ? static_cast<double>(r.requests) / r.makespan_s * scale : 0;
  p.output_tokens_per_s = r.OutputTokensPerS() * scale;
  p.output_tokens_per_s_per_gpu = p.output_tokens_per_s / gpus;
  p.output_tokens_per_s_per_user = p.tpot.mean_s > 0 ? 1.0 / p.tpot.mean_s : 0;
  p.concurrency = load.kind == PlanLoad::Kind::kRate ? p.requests_per_s * r.e2e_s.Mean() : clients;
  return p;
}

}  // namespace

int64_t ClosedLoopRequests(double clients_per_replica) {
  return std::max<int64_t>(200, static_cast<int64_t>(std::ceil(10 * clients_per_replica)));
}

StatusOr<OperatingPoint> SimulateOperatingPoint(const ModelSpec& model, const ClusterSpec& cluster,
                                                const StepModel& step, const PerfOptions& perf,
                                                const Workload& workload, int64_t max_batch,
                                                const PlanLoad& load) {
  SW_ASSIGN_OR_RETURN(
      ReplicaRun run,
      RunReplica(model, cluster, step, perf, workload, max_batch, load,
                 {LengthDistribution::kFixed, static_cast<double>(workload.output_tokens), 0}));
  return Summarize(run.result, load, run.replicas, static_cast<double>(step.layout().gpus()),
                   static_cast<double>(run.clients) * run.replicas);
}

StatusOr<OutOfPhase> SimulateOutOfPhasePoint(const ModelSpec& model, const ClusterSpec& cluster,
                                             const StepModel& step, const PerfOptions& perf,
                                             const Workload& workload, int64_t max_batch,
                                             const PlanLoad& load) {
  SW_ASSIGN_OR_RETURN(
      ReplicaRun run,
      RunReplica(model, cluster, step, perf, workload, max_batch, load,
                 {LengthDistribution::kUniform, static_cast<double>(workload.output_tokens),
                  kOutOfPhaseOutputCv}));
  return OutOfPhase{run.result.ttft_s.Mean(), run.result.tpot_s.Mean()};
}

StatusOr<OperatingPoint> SimulateDisaggregatedPoint(
    const ModelSpec& model, const ClusterSpec& cluster, const Deployment& d,
    const StepModel& prefill, const StepModel& decode, const PerfOptions& perf,
    const Workload& workload, int64_t max_batch, const PlanLoad& load, double offline_clients) {
  const Admission admission =
      perf.engine.no_evict_admission ? Admission::kNoEvict : Admission::kMaxUtilization;
  OfferedLoad offered;
  ArrivalSpec arrivals{std::numeric_limits<double>::infinity(), 1.0};
  double clients = 0;
  int64_t requests = 0;
  switch (load.kind) {
    case PlanLoad::Kind::kOffline:
    case PlanLoad::Kind::kConcurrency:
      clients = load.kind == PlanLoad::Kind::kOffline ? offline_clients : load.value;
      offered.max_in_flight = clients;
      requests = ClosedLoopRequests(clients);
      break;
    case PlanLoad::Kind::kRate:
      arrivals.rate_per_s = offered.rate_per_s = load.value;
      requests = std::max<int64_t>(1000, static_cast<int64_t>(std::ceil(load.value * 60)));
      break;
  }
  SW_ASSIGN_OR_RETURN(
      std::unique_ptr<DisaggregatedServing> serving,
      BuildDisaggregatedServing(model, d, prefill, decode, cluster, cluster, true, perf, workload,
                                workload.prompt_tokens + workload.output_tokens, max_batch,
                                admission, offered));
  SimConfig& config = serving->config;
  config.concurrency = static_cast<int64_t>(std::ceil(clients));
  config.router = LeastLoadedRouter{};
  RequestSource source = FixedLengths(arrivals, workload, requests);
  SW_ASSIGN_OR_RETURN(SimResult r, Simulate(model, serving->prefill_table, source, config));
  return Summarize(r, load, 1.0, static_cast<double>(d.Gpus()), clients);
}

}  // namespace shardwise
