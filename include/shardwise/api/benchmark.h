// Benchmark: the client command that checks a simulation (emit/benchmark.h) — the workload and
// load it served, its warm-up and measured requests scaled to the whole deployment, and the
// TTFT, TPOT and throughput it predicts for them. Pure; thread-safe.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "shardwise/api/saved.h"
#include "shardwise/api/simulate.h"
#include "shardwise/common/status.h"
#include "shardwise/emit/benchmark.h"

namespace shardwise::api {

struct BenchmarkReport {
  emit::BenchmarkTool tool = emit::BenchmarkTool::kAiperf;
  emit::BenchmarkInputs inputs;
  emit::LaunchFile file;
};

// The benchmark of `report`'s run (simulated from `request`) for `tool` (aiperf, vllm or
// sglang); the request's model and `hf_id` name what the server serves as Launch does. The tool
// measures its requests from an idle server, so where `report` is a steady state the measured
// run is simulated again as the tool runs it, every request counted (a closed loop's first
// burst too), and the steady state's figures are kept beside it. Errors name the field: a
// trace, which the tools' random datasets cannot replay, or a spread the tool cannot draw.
StatusOr<BenchmarkReport> Benchmark(const Catalog& catalog, std::string_view tool,
                                    const std::string& hf_id, const SimulateRequest& request,
                                    const ServingReport& report);

// The benchmark of a saved deployment (plan's or recommend's answer): the deployment simulated
// under its saved question, as `simulate --deployment` runs it, so the numbers it predicts are
// the ones the saved result stated (within the 1% the commands agree by).
StatusOr<BenchmarkReport> BenchmarkSaved(const Catalog& catalog, std::string_view tool,
                                         const std::string& hf_id, const SavedDeployment& saved);

// {tool, version, file, text, warmup_requests, requests, predicted: {ttft_p50_ms, ttft_p99_ms,
// tpot_p50_ms, tpot_p99_ms, requests_per_s, output_tokens_per_s}, steady_state: the same fields
// at the steady state, or null where the simulation was already the run the tool measures}.
nlohmann::json ToJson(const BenchmarkReport& report);

}  // namespace shardwise::api
