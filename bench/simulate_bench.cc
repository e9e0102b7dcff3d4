// Benchmark: 1,000,000 chat requests (ISL ~1,000, OSL ~250, lognormal lengths, Poisson at 90%
// of capacity) on one replica of Llama-3.1-8B on one H100, one thread.
// Targets (issue 5): under 5 s wall and under 1 GB peak memory (Vidur, the reference
// simulator, is Python and takes minutes). Reports requests simulated per second and peak RSS.
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include "shardwise/hw/cluster.h"
#include "shardwise/model/catalog.h"
#include "shardwise/sim/simulator.h"

namespace shardwise {
namespace {

// Chat requests (lognormal ISL ~1,000, OSL ~250) on `replicas` replicas of Llama-3.1-8B on one
// H100 each, Poisson at 90% of their capacity (measured by a short offline run of one replica),
// round-robin. Reports requests simulated per second and peak RSS beside the targets.
void SimulateChat(benchmark::State& state, int64_t replicas, double target_s) {
  const ModelSpec model = LoadModel("llama-3.1-8b").value();
  const ClusterSpec cluster = WithGpus(LoadCluster("dgx-h100").value(), 1).value();
  PerfOptions perf;
  perf.weight_dtype = perf.kv_dtype = Dtype::kFp8;
  const StepModel step =
      StepModel::Create(model, cluster, ParseLayout("tp1").value(), perf).value();
  const StepTable table = StepTable::Build(step, 2048, 8192, 8192).value();
  Workload w;
  w.prompt_tokens = 1000;
  w.output_tokens = 250;
  SimConfig config;
  SimPool& pool = config.pools.emplace_back();
  pool.table = &table;
  pool.kv_capacity_tokens = step.Estimate(w).memory.kv_capacity_tokens;
  pool.peak_flops_per_s = cluster.gpu.PeakFlopsPerS(Dtype::kFp8);
  pool.usd_per_gpu_hour = cluster.gpu.usd_per_gpu_hour;
  const LengthSpec input{LengthDistribution::kLognormal, 1000, 0.5};
  const LengthSpec output{LengthDistribution::kLognormal, 250, 0.5};
  RequestSource probe({std::numeric_limits<double>::infinity(), 1.0}, input, output, 20000, 1);
  const double capacity = 20000 / Simulate(model, probe, config).value().makespan_s;
  pool.replicas = replicas;
  double simulated = 0;
  for (auto _ : state) {
    RequestSource source({0.9 * capacity * static_cast<double>(replicas), 1.0}, input, output,
                         state.range(0), 42);
    auto result = Simulate(model, source, config);
    benchmark::DoNotOptimize(result);
    simulated += static_cast<double>(result->requests);
  }
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  state.counters["requests_per_s"] = benchmark::Counter(simulated, benchmark::Counter::kIsRate);
  state.counters["peak_rss_mb"] = static_cast<double>(usage.ru_maxrss) / 1024.0;
  state.counters["target_s"] = target_s;
  state.counters["target_rss_mb"] = 1024.0;
}

// One replica. Target (issue 5): under 5 s wall and under 1 GB.
void BM_SimulateMillionChatRequests(benchmark::State& state) { SimulateChat(state, 1, 5.0); }
BENCHMARK(BM_SimulateMillionChatRequests)->Arg(1'000'000)->Unit(benchmark::kSecond)->Iterations(1);

// 1,024 replicas (128 DGX nodes). Target (issue 9): under 10 s wall and under 1 GB.
void BM_SimulateMillionRequestsOn1024Replicas(benchmark::State& state) {
  SimulateChat(state, 1024, 10.0);
}
BENCHMARK(BM_SimulateMillionRequestsOn1024Replicas)
    ->Arg(1'000'000)
    ->Unit(benchmark::kSecond)
    ->Iterations(1);

}  // namespace
}  // namespace shardwise

BENCHMARK_MAIN();
