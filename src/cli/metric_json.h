// The metric objects of --json (docs/json.md): one metric is one object under a key that carries
// its unit, e.g. "ttft_s": {"mean", "p50", "p99"}. Every command builds its latency objects here,
// so their shape is the same everywhere; when perf/ and sim/ report a model's uncertainty, its
// bounds join these objects (as "low" and "high" beside each value) in this file alone.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "shardwise/perf/uncertainty.h"
#include "shardwise/plan/load.h"
#include "shardwise/sim/histogram.h"

namespace shardwise::cli {

// A latency simulated at a load, as the planner summarises it: {"mean", "p50", "p99"}.
nlohmann::json LatencyJson(const LatencySummary& s);

// A simulated latency's distribution: {"p50", "p90", "p99", "mean", "count", "cdf"}, the cdf a
// labelled series [{"percentile", "value_s"}] (every 5th percentile, the 1st and the 99th).
nlohmann::json DistributionJson(const LogHistogram& h);

// The distribution without its cdf, with "at_percentile": the value at `percentile` (in (0,
// 100)), the one an SLO at that percentile is judged by.
nlohmann::json PercentileJson(const LogHistogram& h, double percentile);

// What a latency's band covers (perf/uncertainty.h).
struct BandSpec {
  double relative = 0;                     // the inputs' provenance, around each mean
  std::optional<double> other_mean;        // a closed loop's other client phase (client_phase.h)
  std::optional<MeasuredRatios> measured;  // where measured closed loops fell (engine profile)
};

// The band around `mean`: the lowest low and the highest high of its provenance band, the same
// around `other_mean`, and the measured spread around `mean`.
Band LatencyBand(double mean, const BandSpec& spec);

// The bands of a load's mean TTFT and TPOT and the inputs they assume: the step model's
// provenance bands (`ttft` from the prefill, `tpot` from the decode step), the loop out of phase
// where it ran too ("closed_loop.client_phase"), and, for a closed loop of aggregated replicas
// (`measured`), where the engine's measured closed loops fell around such predictions
// (measured_spread.h; "engine.closed_loop_measured_on" when they ran on another GPU than `gpu`).
struct LoadBands {
  BandSpec ttft, tpot;
  std::vector<std::string> assumed_inputs;
};
LoadBands BandsAtLoad(const PhaseUncertainty& ttft, const PhaseUncertainty& tpot,
                      const std::optional<OutOfPhase>& phase, const EngineProfile& engine,
                      const std::string& gpu, bool measured);

// `latency` (an object with a "mean") with "low" and "high" from LatencyBand.
nlohmann::json WithBand(nlohmann::json latency, const BandSpec& spec);

}  // namespace shardwise::cli
