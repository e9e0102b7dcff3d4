#include "shardwise/api/benchmark.h"

#include <cmath>
#include <variant>

#include "shardwise/api/launch.h"
#include "shardwise/api/replay.h"
#include "shardwise/sim/serving.h"

namespace shardwise::api {
namespace {

constexpr double kMsPerS = 1e3;
// The largest measured run simulated again as the tool runs it: a fixed run simulates every
// replica, about 20 s per million requests on the 2-core development machine
// (sim/serving.h, kMaxRunRequests), so beyond this the steady state's figures stand.
constexpr int64_t kMaxRunSimulated = 200'000;

emit::BenchmarkLength LengthOf(const LengthSpec& l) {
  return {std::string(LengthDistributionName(l.distribution)),
          static_cast<int64_t>(std::llround(l.mean)),
          l.distribution == LengthDistribution::kFixed ? 0.0 : l.cv};
}

// Requests of the simulated replicas, for the whole deployment.
int64_t WholeDeployment(int64_t simulated, double replica_scale) {
  return static_cast<int64_t>(std::llround(static_cast<double>(simulated) * replica_scale));
}

// What a run predicts the tool prints over its measured requests.
emit::BenchmarkPrediction PredictionOf(const ServingRun& run) {
  const SimResult& r = run.result;
  // An open loop that keeps up serves the rate the client offers; the simulated window's count
  // carries its own arrivals' Poisson noise (it had predicted 10.95 requests/s at 10 offered).
  const bool offered = std::isfinite(run.offered_requests_per_s) && !run.overloaded;
  emit::BenchmarkPrediction p;
  p.ttft_p50_ms = r.ttft_s.Percentile(50) * kMsPerS;
  p.ttft_p99_ms = r.ttft_s.Percentile(99) * kMsPerS;
  p.tpot_p50_ms = r.tpot_s.Percentile(50) * kMsPerS;
  p.tpot_p99_ms = r.tpot_s.Percentile(99) * kMsPerS;
  p.requests_per_s = offered ? run.offered_requests_per_s : run.RequestsPerS();
  p.output_tokens_per_s = run.BilledOutputTokensPerS();
  return p;
}

nlohmann::json PredictionJson(const emit::BenchmarkPrediction& p) {
  return {{"ttft_p50_ms", p.ttft_p50_ms},       {"ttft_p99_ms", p.ttft_p99_ms},
          {"tpot_p50_ms", p.tpot_p50_ms},       {"tpot_p99_ms", p.tpot_p99_ms},
          {"requests_per_s", p.requests_per_s}, {"output_tokens_per_s", p.output_tokens_per_s}};
}

}  // namespace

StatusOr<BenchmarkReport> Benchmark(const Catalog& catalog, std::string_view tool,
                                    const std::string& hf_id, const SimulateRequest& request,
                                    const ServingReport& report) {
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
  SW_ASSIGN_OR_RETURN(in.model, ServedModel(request.model, hf_id));
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
  in.predicted = PredictionOf(run);
  // The tool measures its requests from an idle server (its warm-up finishes first: aiperf's
  // phases run one after another, vLLM's warm-up is a run of its own, SGLang's is sent before),
  // so a closed loop's first burst is measured too. A steady state's figures are the command's
  // answer; the run the tool measures is simulated as it runs, every request counted.
  in.steady_state_settled = !steady.sized || steady.converged;
  if (steady.sized && in.requests <= kMaxRunSimulated) {
    SimulateRequest whole = request;
    // The deployment the answer resolved (a layout the request left open is not chosen again).
    whole.deployment = report.saved.deployment;
    whole.requests = in.requests;
    whole.progress = nullptr;
    SW_ASSIGN_OR_RETURN(const ServingReport measured, Simulate(catalog, whole));
    in.steady_state = in.predicted;
    in.predicted = PredictionOf(measured.run);
  } else if (steady.sized) {
    in.too_large_to_simulate = true;
  }
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
  return Benchmark(catalog, tool, hf_id, request, served);
}

nlohmann::json ToJson(const BenchmarkReport& rep) {
  return {{"tool", emit::BenchmarkToolName(rep.tool)},
          {"version", emit::BenchmarkToolVersion(rep.tool)},
          {"file", rep.file.name},
          {"text", rep.file.text},
          {"warmup_requests", rep.inputs.warmup_requests},
          {"requests", rep.inputs.requests},
          {"predicted", PredictionJson(rep.inputs.predicted)},
          // What `predicted` is: the run as the tool measures it, or, for a run too large to
          // simulate whole, the steady state's figures (the first burst not in them).
          {"predicted_basis", rep.inputs.too_large_to_simulate ? "steady_state" : "run"},
          {"steady_state", rep.inputs.steady_state ? PredictionJson(*rep.inputs.steady_state)
                                                   : nlohmann::json(nullptr)}};
}

}  // namespace shardwise::api
