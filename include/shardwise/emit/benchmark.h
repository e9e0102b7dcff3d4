// The benchmark that checks a prediction: the client command for the workload and load the
// simulator served (prompt and output lengths, fixed or spread; a closed loop's clients or an
// open loop's rate; a warm-up, then the measured requests), for NVIDIA's AIPerf, vLLM's
// 'vllm bench serve' or SGLang's bench_serving, written with the numbers it should see. Flags
// as documented for the versions named in BenchmarkToolVersion; what a tool cannot express
// (a lognormal length, bursty arrivals) is a comment, never a made-up flag. Pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "shardwise/common/status.h"
#include "shardwise/emit/launch_config.h"

namespace shardwise::emit {

enum class BenchmarkTool { kAiperf, kVllm, kSglang };
StatusOr<BenchmarkTool> ParseBenchmarkTool(std::string_view name);
std::string_view BenchmarkToolName(BenchmarkTool tool);
std::string_view BenchmarkToolVersion(BenchmarkTool tool);
// "bench_aiperf.sh", ...
std::string BenchmarkFileName(BenchmarkTool tool);

// A length the client draws: fixed, or uniform or lognormal around `mean` with `cv`.
struct BenchmarkLength {
  std::string distribution = "fixed";  // fixed, uniform or lognormal
  int64_t mean = 1024;
  double cv = 0;
};

// What the simulation predicts the benchmark measures over its requests.
struct BenchmarkPrediction {
  double ttft_p50_ms = 0, ttft_p99_ms = 0;
  double tpot_p50_ms = 0, tpot_p99_ms = 0;
  double requests_per_s = 0;
  double output_tokens_per_s = 0;
};

struct BenchmarkInputs {
  std::string model;  // what the server serves (its Hugging Face id or path)
  std::string host = "localhost";
  int64_t port = 8000;  // the router or frontend --emit starts
  BenchmarkLength input, output;
  std::optional<int64_t> concurrency;  // a closed loop; else an open loop at `rate_per_s`
  double rate_per_s = 0;               // infinity: every request at once (offline)
  double burstiness = 1;               // CV of an open loop's gaps (1 = Poisson)
  int64_t warmup_requests = 0;         // sent first, not measured
  int64_t requests = 1;                // measured
  uint64_t seed = 1;
  BenchmarkPrediction predicted;  // over the measured requests, from an idle server
  // The figures at the steady state, where the command that wrote the benchmark states them
  // (its measured run starts from an idle server: a closed loop's clients from one burst).
  std::optional<BenchmarkPrediction> steady_state;
  bool steady_state_settled = true;    // false: the answer's window had not settled
  bool too_large_to_simulate = false;  // `predicted` is the steady state's: the run is too large
};

// The script that runs `tool` against the served deployment; an error naming what is out of
// the tool's range.
StatusOr<LaunchFile> MakeBenchmark(BenchmarkTool tool, const BenchmarkInputs& in);

}  // namespace shardwise::emit
