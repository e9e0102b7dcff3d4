// Benchmark: the runtime's batch-1 decode on a ~125M-parameter dense model (small-dense) in
// each weight storage, against this machine's read-bandwidth bound: each token reads every
// weight but the input embedding once, so tokens/s cannot exceed the decode kernel's measured
// read bandwidth (host_profile.h; all cores' when the run uses both) over the weight bytes per
// token. Target (issue 12): >= 90% of that bound, with 1 thread and with 2 (tp2, or tp1 with
// two threads per rank). Comparable with llama.cpp on the same model shape, weight format and
// thread count (bench/llama_cpp_compare.sh).
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include "shardwise/model/accounting.h"
#include "shardwise/model/catalog.h"
#include "shardwise/runtime/comm/thread_comm.h"
#include "shardwise/runtime/host_profile.h"
#include "shardwise/runtime/runner.h"

namespace shardwise {
namespace {

double DecodeTokensPerS(const std::string& layout, WeightStorage storage, int threads,
                        int64_t gen) {
  RunConfig c;
  c.model = LoadModel("small-dense").value();
  c.layout = ParseLayout(layout).value();
  c.batch = 1;
  c.prompt_tokens = 8;
  c.generate_tokens = gen;
  c.kernels = {storage, threads};
  double tok_s = 0;
  const Status s =
      RunOnThreads(static_cast<int>(c.layout.gpus()), 120, [&](Communicator& w) -> Status {
        SW_ASSIGN_OR_RETURN(RunResult r, RunRank(c, w));
        if (w.rank() == 0) tok_s = static_cast<double>(gen - 1) / r.decode.wall_s;
        return Status();
      });
  return s.ok() ? tok_s : 0.0;
}

const HostProfile& Host() {
  static const HostProfile host = MeasureHostProfile();
  return host;
}

// Args: weight storage (0 fp32, 1 bf16, 2 int8), TP degree, threads per rank.
void BM_DecodeVsReadBandwidthBound(benchmark::State& state) {
  const WeightStorage storage = static_cast<WeightStorage>(state.range(0));
  const int tp = static_cast<int>(state.range(1)), threads = static_cast<int>(state.range(2));
  const ModelSpec m = LoadModel("small-dense").value();
  const ParamBreakdown p = CountParams(m);
  const double bytes_per_token =
      static_cast<double>(p.total - p.embedding) * WeightStorageBytes(storage);
  const double read =
      tp * threads > 1 ? Host().read_bytes_per_s_all_cores : Host().read_bytes_per_s;
  const double bound = read / bytes_per_token;
  double tok_s = 0;
  for (auto _ : state) tok_s = DecodeTokensPerS(fmt::format("tp{}", tp), storage, threads, 64);
  state.SetLabel(fmt::format("{} tp{} x{} threads", WeightStorageName(storage), tp, threads));
  state.counters["tokens_per_s"] = tok_s;
  state.counters["bound_tokens_per_s"] = bound;
  state.counters["fraction_of_bound"] = tok_s / bound;
  state.counters["target_fraction"] = 0.90;
}
BENCHMARK(BM_DecodeVsReadBandwidthBound)
    ->ArgsProduct({{0, 1, 2}, {1}, {1, 2}})
    ->Args({0, 2, 1})
    ->Unit(benchmark::kSecond)
    ->Iterations(1);

}  // namespace
}  // namespace shardwise

BENCHMARK_MAIN();
