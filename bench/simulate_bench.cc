// Benchmark: 1,000,000 chat requests (ISL ~1,000, OSL ~250, lognormal lengths, Poisson at 90%
// of capacity) on one replica of Llama-3.1-8B on one H100, one thread.
// Targets (issue 5): under 5 s wall and under 1 GB peak memory (Vidur, the reference
// simulator, is Python and takes minutes). Reports requests simulated per second and peak RSS.
#include <sys/resource.h>

#include <benchmark/benchmark.h>

#include "shardwise/hw/cluster.h"
#include "shardwise/model/catalog.h"
#include "shardwise/sim/simulator.h"

namespace shardwise {
namespace {

void BM_SimulateMillionChatRequests(benchmark::State& state) {
  const ModelSpec model = LoadModel("llama-3.1-8b").value();
  const ClusterSpec cluster = WithGpus(LoadCluster("dgx-h100").value(), 1).value();
  PerfOptions perf;
  perf.weight_dtype = perf.kv_dtype = Dtype::kFp8;
  const StepModel step = StepModel::Create(model, cluster, ParseLayout("tp1").value(), perf).value();
  const StepTable table = StepTable::Build(step, 2048, 8192, 8192).value();
  Workload w;
  w.prompt_tokens = 1000;
  w.output_tokens = 250;
  SimConfig config;
  config.kv_capacity_tokens = step.Estimate(w).memory.kv_capacity_tokens;
  config.peak_flops_per_s = cluster.gpu.PeakFlopsPerS(Dtype::kFp8);
  config.usd_per_gpu_hour = cluster.gpu.usd_per_gpu_hour;
  const int64_t requests = state.range(0);
  // Capacity from a short offline run; arrivals at 90% of it.
  RequestSource probe({std::numeric_limits<double>::infinity(), 1.0},
                      {LengthDistribution::kLognormal, 1000, 0.5},
                      {LengthDistribution::kLognormal, 250, 0.5}, 20000, 1);
  const double capacity = 20000 / Simulate(model, table, probe, config).value().makespan_s;
  double simulated = 0;
  for (auto _ : state) {
    RequestSource source({0.9 * capacity, 1.0}, {LengthDistribution::kLognormal, 1000, 0.5},
                         {LengthDistribution::kLognormal, 250, 0.5}, requests, 42);
    auto result = Simulate(model, table, source, config);
    benchmark::DoNotOptimize(result);
    simulated += static_cast<double>(result->requests);
  }
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  state.counters["requests_per_s"] = benchmark::Counter(simulated, benchmark::Counter::kIsRate);
  state.counters["peak_rss_mb"] = static_cast<double>(usage.ru_maxrss) / 1024.0;
  state.counters["target_s"] = 5.0;
  state.counters["target_rss_mb"] = 1024.0;
}
BENCHMARK(BM_SimulateMillionChatRequests)->Arg(1'000'000)->Unit(benchmark::kSecond)->Iterations(1);

// 1,000,000 of the same chat requests over 1,024 replicas of Llama-3.1-8B (one H100 each, 128
// DGX nodes), Poisson at 90% of their capacity, round-robin. Target (issue 9): under 10 s wall
// and under 1 GB peak memory.
void BM_SimulateMillionRequestsOn1024Replicas(benchmark::State& state) {
  constexpr int64_t kReplicas = 1024;
  const ModelSpec model = LoadModel("llama-3.1-8b").value();
  const ClusterSpec cluster = WithGpus(LoadCluster("dgx-h100").value(), 1).value();
  PerfOptions perf;
  perf.weight_dtype = perf.kv_dtype = Dtype::kFp8;
  const StepModel step = StepModel::Create(model, cluster, ParseLayout("tp1").value(), perf).value();
  const StepTable table = StepTable::Build(step, 2048, 8192, 8192).value();
  Workload w;
  w.prompt_tokens = 1000;
  w.output_tokens = 250;
  SimConfig config;
  config.kv_capacity_tokens = step.Estimate(w).memory.kv_capacity_tokens;
  RequestSource probe({std::numeric_limits<double>::infinity(), 1.0},
                      {LengthDistribution::kLognormal, 1000, 0.5},
                      {LengthDistribution::kLognormal, 250, 0.5}, 20000, 1);
  const double capacity = 20000 / Simulate(model, table, probe, config).value().makespan_s;
  config.replicas = kReplicas;
  double simulated = 0;
  for (auto _ : state) {
    RequestSource source({0.9 * capacity * kReplicas, 1.0},
                         {LengthDistribution::kLognormal, 1000, 0.5},
                         {LengthDistribution::kLognormal, 250, 0.5}, state.range(0), 42);
    auto result = Simulate(model, table, source, config);
    benchmark::DoNotOptimize(result);
    simulated += static_cast<double>(result->requests);
  }
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  state.counters["requests_per_s"] = benchmark::Counter(simulated, benchmark::Counter::kIsRate);
  state.counters["peak_rss_mb"] = static_cast<double>(usage.ru_maxrss) / 1024.0;
  state.counters["target_s"] = 10.0;
  state.counters["target_rss_mb"] = 1024.0;
}
BENCHMARK(BM_SimulateMillionRequestsOn1024Replicas)
    ->Arg(1'000'000)
    ->Unit(benchmark::kSecond)
    ->Iterations(1);

}  // namespace
}  // namespace shardwise

BENCHMARK_MAIN();
