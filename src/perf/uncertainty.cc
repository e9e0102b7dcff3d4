#include "shardwise/perf/uncertainty.h"

#include <algorithm>
#include <cmath>

namespace shardwise {
namespace {

// A measured calibration reproduces its own benchmarks to about 5% (GEMMs of the H100 at
// 0.87-1.05 of the prediction, median 0.99; HBM copy at 1.04: docs/validation.md).
constexpr double kMeasuredRelative = 0.05;
// A fitted physical constant: its fit subset's residual spread plus what it absorbs of others.
constexpr double kFittedRelative = 0.10;
// A number reasoned from an engine's documentation or code, not measured: a third either way.
constexpr double kAssumedRelative = 0.30;

// The inputs behind one part of a phase.
struct Part {
  double s;
  std::vector<std::pair<std::string, Provenance>> inputs;
};

Provenance EngineField(const EngineProfile& e, const std::string& key) {
  auto it = e.provenance.find(key);
  // A profile built in code (not parsed) states nothing: its numbers are assumed.
  return it != e.provenance.end() ? it->second : Provenance::kAssumed;
}

}  // namespace

double RelativeUncertainty(Provenance p) {
  switch (p) {
    case Provenance::kMeasured:
      return kMeasuredRelative;
    case Provenance::kFitted:
      return kFittedRelative;
    case Provenance::kAssumed:
      return kAssumedRelative;
  }
  return kAssumedRelative;
}

PhaseUncertainty PhaseBand(const PhaseBreakdown& phase, const GpuSpec& gpu,
                           const EngineProfile& engine, Dtype weights) {
  auto gpu_input = [&](const std::string& key) {
    return std::pair<std::string, Provenance>{"gpu." + key, gpu.ProvenanceOf(key)};
  };
  auto engine_input = [&](const std::string& key) {
    return std::pair<std::string, Provenance>{"engine." + key, EngineField(engine, key)};
  };
  // The collective model is calibrated on nccl-tests runs (docs/validation.md, Collectives).
  const std::pair<std::string, Provenance> collectives{"cluster.collectives",
                                                       Provenance::kMeasured};
  const Part parts[] = {
      {phase.compute_s,
       {gpu_input(GpuSpec::GemmFractionKey(gpu.ComputeDtypeFor(weights))),
        engine_input("attention_efficiency")}},
      {phase.memory_s, {gpu_input("hbm_fraction")}},
      {phase.launch_s, {gpu_input("kernel_latency_s"), engine_input("kernels_per_attention")}},
      {phase.tp_comm_s, {engine_input("custom_allreduce_latency_s"), collectives}},
      {phase.ep_comm_s + phase.cp_comm_s + phase.pp_comm_s + phase.bubble_s, {collectives}},
      {phase.overhead_s,
       {engine_input("step_overhead_s"), engine_input("host_launch_s_per_kernel")}},
  };
  PhaseUncertainty out;
  double variance_s2 = 0;
  for (const Part& part : parts) {
    if (part.s <= 0) continue;
    // A part's inputs multiply (kernels times their latency) or share it (GEMMs and attention):
    // their relative errors add in quadrature, an upper bound for the shared case.
    double relative2 = 0;
    for (const auto& [name, provenance] : part.inputs) {
      relative2 += std::pow(RelativeUncertainty(provenance), 2);
      if (provenance == Provenance::kAssumed &&
          std::find(out.assumed_inputs.begin(), out.assumed_inputs.end(), name) ==
              out.assumed_inputs.end()) {
        out.assumed_inputs.push_back(name);
      }
    }
    variance_s2 += part.s * part.s * relative2;
  }
  out.relative = phase.total_s > 0 ? std::sqrt(variance_s2) / phase.total_s : 0.0;
  return out;
}

std::vector<std::string> AssumedInputs(const PhaseUncertainty& a, const PhaseUncertainty& b) {
  std::vector<std::string> out = a.assumed_inputs;
  for (const std::string& name : b.assumed_inputs) {
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
  }
  return out;
}

Band Widen(double value, double relative) {
  return {value * std::max(0.0, 1.0 - relative), value * (1.0 + relative)};
}

Band MeasuredSpread(double value, const MeasuredRatios& ratios) {
  return {value * ratios.p10, value * ratios.p90};
}

}  // namespace shardwise
