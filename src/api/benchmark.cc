#include "shardwise/api/benchmark.h"

#include <cmath>
#include <variant>

#include "shardwise/api/launch.h"
#include "shardwise/api/replay.h"

namespace shardwise::api {
namespace {

constexpr double kMsPerS = 1e3;

emit::BenchmarkLength LengthOf(const LengthSpec& l) {
  return {std::string(LengthDistributionName(l.distribution)),
          static_cast<int64_t>(std::llround(l.mean)),
          l.distribution == LengthDistribution::kFixed ? 0.0 : l.cv};
}

// Requests of the simulated replicas, for the whole deployment.
int64_t WholeDeployment(int64_t simulated, double replica_scale) {
  return static_cast<int64_t>(std::llround(static_cast<double>(simulated) * replica_scale));
}

}  // namespace

StatusOr<BenchmarkReport> Benchmark(std::string_view tool, const std::string& model_arg,
                                    const std::string& hf_id, const ServingReport& report) {
  BenchmarkReport rep;
  StatusOr<emit::BenchmarkTool> which = emit::ParseBenchmarkTool(tool);
  if (!which.ok()) return which.status().WithField("emit_benchmark");
  rep.tool = *which;
  const Scenario& s = report.scenario;
  if (!s.trace.empty()) {
    return FieldError("trace",
                      "a `trace`'s requests cannot be drawn by the benchmark tools' random "
                      "datasets; benchmark generated lengths (isl, osl) instead");
  }
  emit::BenchmarkInputs& in = rep.inputs;
  SW_ASSIGN_OR_RETURN(in.model, ServedModel(model_arg, hf_id));
  in.input = LengthOf(s.input);
  in.output = LengthOf(s.output);
  if (const auto* closed = std::get_if<ClosedLoop>(&s.load)) {
    in.concurrency = closed->clients;
  } else {
    const auto& open = std::get<OpenLoop>(s.load);
    in.rate_per_s = open.rate_per_s;
    in.burstiness = open.burstiness_cv;
  }
  const ServingRun& run = report.run;
  const SteadyState& steady = run.steady;
  in.warmup_requests = WholeDeployment(steady.warmup_requests, run.replica_scale);
  in.requests = std::max<int64_t>(
      1, WholeDeployment(steady.sized ? steady.measured_requests : run.result.requests,
                         run.replica_scale));
  in.seed = s.seed;
  const SimResult& r = run.result;
  // An open loop that keeps up serves the rate the client offers; the simulated window's count
  // carries its own arrivals' Poisson noise (it had predicted 10.95 requests/s at 10 offered).
  const bool offered = std::isfinite(run.offered_requests_per_s) && !run.overloaded;
  in.predicted = {r.ttft_s.Percentile(50) * kMsPerS,
                  r.ttft_s.Percentile(99) * kMsPerS,
                  r.tpot_s.Percentile(50) * kMsPerS,
                  r.tpot_s.Percentile(99) * kMsPerS,
                  offered ? run.offered_requests_per_s : run.RequestsPerS(),
                  run.BilledOutputTokensPerS()};
  SW_ASSIGN_OR_RETURN(rep.file, emit::MakeBenchmark(rep.tool, in));
  return rep;
}

StatusOr<BenchmarkReport> BenchmarkSaved(const Catalog& catalog, std::string_view tool,
                                         const std::string& hf_id, const SavedDeployment& saved) {
  // The tool first: a misspelt name is refused before the simulation.
  SW_RETURN_IF_ERROR(emit::ParseBenchmarkTool(tool).status().WithField("emit_benchmark"));
  SimulateRequest request;
  Replay(saved, GivenFields{}, request);
  SW_ASSIGN_OR_RETURN(const ServingReport served, Simulate(catalog, request));
  return Benchmark(tool, saved.model, hf_id, served);
}

nlohmann::json ToJson(const BenchmarkReport& rep) {
  const emit::BenchmarkPrediction& p = rep.inputs.predicted;
  return {{"tool", emit::BenchmarkToolName(rep.tool)},
          {"version", emit::BenchmarkToolVersion(rep.tool)},
          {"file", rep.file.name},
          {"text", rep.file.text},
          {"warmup_requests", rep.inputs.warmup_requests},
          {"requests", rep.inputs.requests},
          {"predicted",
           {{"ttft_p50_ms", p.ttft_p50_ms},
            {"ttft_p99_ms", p.ttft_p99_ms},
            {"tpot_p50_ms", p.tpot_p50_ms},
            {"tpot_p99_ms", p.tpot_p99_ms},
            {"requests_per_s", p.requests_per_s},
            {"output_tokens_per_s", p.output_tokens_per_s}}}};
}

}  // namespace shardwise::api
