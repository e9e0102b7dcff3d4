// Uncertainty: the band a predicted time carries from the provenance of the catalog numbers
// that set it. Each part of a phase (compute, HBM traffic, kernel launches, each communication,
// the engine's per-step time) rests on one kind of input: the GPU's calibrated fractions, its
// per-kernel latency and the engine's kernel counts, the engine's all-reduce latency and step
// overhead, the collective model's calibration. A part inherits its input's relative uncertainty
// (measured 5%, fitted 10%, assumed 30%); independent parts add in quadrature. The prediction
// states which of its inputs were assumed. Pure functions.
#pragma once

#include <string>
#include <vector>

#include "shardwise/common/provenance.h"
#include "shardwise/hw/gpu.h"
#include "shardwise/perf/breakdown.h"
#include "shardwise/perf/engine.h"

namespace shardwise {

// Relative half-width of an input of each provenance.
double RelativeUncertainty(Provenance p);

struct PhaseUncertainty {
  double relative = 0;                      // half-width of the band over the phase's time
  std::vector<std::string> assumed_inputs;  // "engine.step_overhead_s", "gpu.kernel_latency_s"
};

// The band of `phase`'s total time on `gpu` under `engine`, its GEMMs on weights stored in
// `weights`: the compute part takes the provenance of the fraction of the format they run in
// (GpuSpec::ComputeDtypeFor; "gemm_fraction.fp8" where the GPU file states one, else its
// fractions' own).
PhaseUncertainty PhaseBand(const PhaseBreakdown& phase, const GpuSpec& gpu,
                           const EngineProfile& engine, Dtype weights);

// The inputs either band assumed, each once.
std::vector<std::string> AssumedInputs(const PhaseUncertainty& a, const PhaseUncertainty& b);

// `value` widened by a relative half-width: {low, high}.
struct Band {
  double low = 0;
  double high = 0;
};
Band Widen(double value, double relative);

// `value` scaled to where measurements have fallen around such predictions: {value x p10,
// value x p90} (EngineProfile::closed_loop_ttft and _tpot).
Band MeasuredSpread(double value, const MeasuredRatios& ratios);

}  // namespace shardwise
