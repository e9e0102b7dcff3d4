// Benchmark results as the serving benchmarks write them, read for calibrate (api/calibrate.h):
// - `vllm bench serve --save-result` (vLLM 0.10-0.12 benchmarks/serve.py): one JSON object with
//   completed, total_input_tokens, total_output_tokens, mean_ttft_ms, mean_tpot_ms,
//   output_throughput, request_rate ("inf" or a number), max_concurrency (null or a number),
//   burstiness and model_id.
// - SGLang `bench_serving --output-file` (SGLang 0.5): one such object per line (JSONL), the
//   same field names (its benchmark derives from vLLM's); Python's Infinity and NaN accepted.
// - AIPerf's profile export (`profile_export_aiperf.json`, AIPerf 0.3): metrics by tag, each
//   {"unit", "avg", ...}: time_to_first_token, inter_token_latency (AIPerf's per-request TPOT),
//   input_sequence_length, output_sequence_length, output_token_throughput, request_count, at
//   the top level or under "records"; the load in input_config.loadgen (concurrency,
//   request_rate) and the model in input_config.endpoint.model_names.
// Each run is a closed loop of `concurrency` clients, or an open loop at `rate_per_s` (infinite:
// every request at once). Pure; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "shardwise/common/status.h"

namespace shardwise::api {

struct BenchmarkRun {
  std::string file;                    // where it was read ("FILE:LINE" for a JSONL line)
  std::string format;                  // "vllm", "sglang" or "aiperf"
  std::string model_id;                // as the benchmark recorded it; empty when it did not
  std::optional<int64_t> concurrency;  // a closed loop of this many clients
  std::optional<double> rate_per_s;    // else an open loop (infinity: all at once)
  double burstiness = 1;               // the open loop's gap CV
  double input_tokens = 0;             // mean per request
  double output_tokens = 0;
  int64_t completed = 0;  // 0 where the file does not say
  double mean_ttft_ms = 0;
  double mean_tpot_ms = 0;
  double output_tokens_per_s = 0;  // 0 where the file does not say

  // "concurrency 64" or "rate 12.5/s".
  std::string LoadName() const;
};

// The runs in a results file; an error naming the file and what is missing or malformed.
StatusOr<std::vector<BenchmarkRun>> ReadBenchmarkResults(const std::string& path);

}  // namespace shardwise::api
