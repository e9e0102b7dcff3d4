// The band a simulated mean TTFT or TPOT carries (docs/validation.md): the uncertainty of the
// catalog numbers its step model used (perf/uncertainty.h), widened to cover the same closed loop
// with its clients out of phase where that ran, and, for a closed loop of aggregated replicas
// (what the serving validation measured), where the engine's measured closed loops fell around
// such predictions (the engine profile's closed_loop_*_ratio fields). Pure functions.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "shardwise/perf/engine.h"
#include "shardwise/perf/uncertainty.h"
#include "shardwise/sim/serving.h"

namespace shardwise {

// What a latency's band covers.
struct BandSpec {
  double relative = 0;                     // the inputs' provenance, around each mean
  std::optional<double> other_mean;        // a closed loop's other client phase
  std::optional<MeasuredRatios> measured;  // where measured closed loops fell
};

// The band around `mean`: the lowest low and the highest high of its provenance band, the same
// around `other_mean`, and the measured spread around `mean`.
Band LatencyBand(double mean, const BandSpec& spec);

// The bands of a load's mean TTFT and TPOT and the inputs they assume: the step model's bands
// (`ttft` from the prefill, `tpot` from the decode step), the loop out of phase where it ran too
// ("closed_loop.client_phase"), and, for a closed loop of aggregated replicas (`measured`), the
// measured spread ("engine.closed_loop_measured_on" when it was measured on another GPU than
// `gpu`).
struct LoadBands {
  BandSpec ttft, tpot;
  std::vector<std::string> assumed_inputs;
  bool measured = false;  // the measured spread applies
};
LoadBands BandsAtLoad(const PhaseUncertainty& ttft, const PhaseUncertainty& tpot,
                      const std::optional<OutOfPhase>& phase, const EngineProfile& engine,
                      const std::string& gpu, bool measured);

// The bands of deployment `d` at a load it was simulated at: its prefill pool's prefill and its
// decode pool's decode step (their GPUs and engines), the loop out of phase where it ran too,
// and the measured spread for a closed loop of aggregated replicas (`closed_loop`), what the
// serving validation measured.
LoadBands DeploymentBands(const Deployment& d, const DeploymentEstimate& est,
                          const std::optional<OutOfPhase>& phase, bool closed_loop);

}  // namespace shardwise
