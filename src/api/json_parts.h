// The pieces every result's JSON shares (api/json.h): latency objects, phases, the deployment
// with its pools and engine settings, the cluster tree and roofline the HTML page draws.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "shardwise/api/saved.h"
#include "shardwise/deploy/deployment.h"
#include "shardwise/deploy/estimate.h"
#include "shardwise/plan/load.h"
#include "shardwise/sim/bands.h"
#include "shardwise/sim/samples.h"

namespace shardwise::api::json {

nlohmann::json Optional(const std::optional<double>& v);
// A finite limit, or null for none.
nlohmann::json Limit(double limit_s);

// {"max_ttft_s", "max_tpot_s", "percentile"}.
nlohmann::json SloJson(const Slo& slo);
// A simulated latency: {"p50", "p90", "p99", "max", "mean", "count", "at_slo", "cdf"}, the cdf
// a labelled series [{"percentile", "value_s"}]; with a band, "low" and "high" around the mean.
nlohmann::json DistributionJson(const Samples& samples, const Slo& slo,
                                const std::optional<BandSpec>& band = std::nullopt);
// A latency an operating point summarises: {"mean", "p50", "p90", "p99", "max", "at_slo"}.
nlohmann::json LatencyJson(const LatencySummary& s,
                           const std::optional<BandSpec>& band = std::nullopt);
// The measured spread of an engine's closed loops ({"engine", "measured_on", "gpu", "ttft",
// "tpot"}), or null where the bands do not use it.
nlohmann::json MeasuredSpreadJson(const LoadBands& bands, const EngineProfile& engine,
                                  const std::string& gpu);
// {"lockstep": {"ttft_s", "tpot_s"}, "out_of_phase": {...}, "output_length_cv"}, or null.
nlohmann::json ClientPhaseJson(double lockstep_ttft_s, double lockstep_tpot_s,
                               const std::optional<OutOfPhase>& phase);
// The requests' lengths: {"input_tokens_mean", "output_tokens_mean", "input_distribution",
// "output_distribution", "length_cv"} (null where both are fixed).
nlohmann::json LengthsJson(double input_tokens_mean, double output_tokens_mean,
                           const LengthSpread& spread);
nlohmann::json SteadyStateJson(const SteadyState& s);
// An operating point at a load: concurrency, requests/s, ttft_s, tpot_s, throughput, $/Mtok,
// meets_slo, overloaded, steady_state; the latencies with their bands.
nlohmann::json OperatingPointJson(const OperatingPoint& p, const std::optional<LoadBands>& bands);

nlohmann::json PhaseJson(const PhaseBreakdown& p);
// How the decode step pipelines: stages, micro-batches per cycle, time per stage visit.
nlohmann::json PipelineJson(const StepEstimate& e);
nlohmann::json ClusterTreeJson(const ClusterSpec& cluster);
nlohmann::json RooflineJson(const ModelSpec& model, const ClusterSpec& cluster,
                            const PerfOptions& perf);
nlohmann::json EpSettingJson(const EpSetting& ep);
nlohmann::json SpeculativeJson(const SpeculativeOptions& options);
// The MoE placement of `layout`: routed and redundant experts, skew, experts per GPU and the
// busiest EP rank's placement imbalance; null for a dense model.
nlohmann::json MoeJson(const ModelSpec& model, const Layout& layout, const PerfOptions& perf);
// What a pool's engine is told to run with, which is what the prediction assumed and what
// --emit writes: max sequences and tokens per attention rank, chunking, admission, schedule,
// KV block size and memory fraction, CUDA-graph batch cap, formats and EP exchange.
nlohmann::json EngineSettingsJson(const Pool& pool);
// {"name", "disaggregated", "gpus", "usd_per_hour", "pools": [...], "kv_transfer",
//  "capacity_requests_per_s", "saved"}; the estimate adds each pool's KV room and rate.
nlohmann::json DeploymentJson(const Deployment& d, const DeploymentEstimate* estimate,
                              const SavedDeployment& saved);

}  // namespace shardwise::api::json
