// Uncertainty bands from the provenance of a prediction's inputs, against a hand calculation.
#include "shardwise/perf/uncertainty.h"

#include <gtest/gtest.h>

#include <cmath>

namespace shardwise {
namespace {

TEST(Uncertainty, PartsAddInQuadratureByTheirInputsProvenance) {
  // A 13 ms decode step: 10 ms of HBM traffic (the H100's measured HBM fraction: 5%), 2 ms of
  // kernel launches (its fitted per-kernel latency, 10%, times the engine's assumed kernel
  // counts, 30%), 1 ms of per-step overhead (a fitted step time, 10%, beside an assumed host
  // launch time, 30%):
  //   (10 x 0.05)^2 + 2^2 x (0.1^2 + 0.3^2) + 1^2 x (0.1^2 + 0.3^2) = 0.25 + 0.4 + 0.1 = 0.75
  //   half-width sqrt(0.75) = 0.866 ms = 6.66% of 13 ms.
  GpuSpec gpu;
  gpu.calibration_measured = true;
  gpu.provenance["kernel_latency_s"] = Provenance::kFitted;
  EngineProfile engine;
  engine.provenance = {{"kernels_per_attention", Provenance::kAssumed},
                       {"step_overhead_s", Provenance::kFitted},
                       {"host_launch_s_per_kernel", Provenance::kAssumed}};
  PhaseBreakdown phase;
  phase.memory_s = 10e-3;
  phase.launch_s = 2e-3;
  phase.overhead_s = 1e-3;
  phase.total_s = 13e-3;
  const PhaseUncertainty band = PhaseBand(phase, gpu, engine, Dtype::kBf16);
  EXPECT_NEAR(band.relative, std::sqrt(0.75) / 13, 1e-12);
  EXPECT_EQ(band.assumed_inputs, (std::vector<std::string>{"engine.kernels_per_attention",
                                                           "engine.host_launch_s_per_kernel"}));
  const Band b = Widen(13e-3, band.relative);
  EXPECT_NEAR(b.low, 13e-3 - std::sqrt(0.75) * 1e-3, 1e-15);
  EXPECT_NEAR(b.high, 13e-3 + std::sqrt(0.75) * 1e-3, 1e-15);
}

TEST(Uncertainty, MeasuredSpreadScalesThePrediction) {
  // Measured closed loops at 0.8x to 2.5x a 200 ms prediction: 160 ms to 500 ms.
  const Band b = MeasuredSpread(0.2, MeasuredRatios{0.8, 2.5});
  EXPECT_NEAR(b.low, 0.16, 1e-15);
  EXPECT_NEAR(b.high, 0.5, 1e-15);
}

TEST(Uncertainty, AssumedCalibrationWidensTheBand) {
  // The same HBM-bound step on a GPU whose fractions were not measured: 30% instead of 5%.
  GpuSpec gpu;
  PhaseBreakdown phase;
  phase.memory_s = phase.total_s = 10e-3;
  const PhaseUncertainty band = PhaseBand(phase, gpu, EngineProfile{}, Dtype::kBf16);
  EXPECT_NEAR(band.relative, 0.30, 1e-12);
  EXPECT_EQ(band.assumed_inputs, std::vector<std::string>{"gpu.hbm_fraction"});
}

TEST(Uncertainty, ComputeTakesTheProvenanceOfItsFormatsFraction) {
  // A GPU whose fp8 GEMM fraction was fitted and whose others are assumed (the MI325X's file:
  // "gemm_fraction": assumed, "gemm_fraction.fp8": fitted), beside a measured attention
  // efficiency. A 10 ms compute-bound phase:
  //   fp8 weights, fp8 GEMMs:  sqrt(0.10^2 + 0.05^2) = 11.18%;
  //   bf16 weights:            sqrt(0.30^2 + 0.05^2) = 30.41%, the bf16 fraction named assumed;
  //   int4 weights multiply in bf16 (Hopper-style dequantisation): as bf16.
  GpuSpec gpu;
  gpu.peak_flops_per_s = {{Dtype::kBf16, 1e15}, {Dtype::kFp8, 2e15}};
  gpu.provenance = {{"gemm_fraction", Provenance::kAssumed},
                    {"gemm_fraction.fp8", Provenance::kFitted}};
  EngineProfile engine;
  engine.provenance = {{"attention_efficiency", Provenance::kMeasured}};
  PhaseBreakdown phase;
  phase.compute_s = phase.total_s = 10e-3;
  const PhaseUncertainty fp8 = PhaseBand(phase, gpu, engine, Dtype::kFp8);
  EXPECT_NEAR(fp8.relative, std::sqrt(0.01 + 0.0025), 1e-12);
  EXPECT_TRUE(fp8.assumed_inputs.empty());
  const PhaseUncertainty bf16 = PhaseBand(phase, gpu, engine, Dtype::kBf16);
  EXPECT_NEAR(bf16.relative, std::sqrt(0.09 + 0.0025), 1e-12);
  EXPECT_EQ(bf16.assumed_inputs, std::vector<std::string>{"gpu.gemm_fraction.bf16"});
  EXPECT_NEAR(PhaseBand(phase, gpu, engine, Dtype::kInt4).relative, bf16.relative, 1e-15);
}

}  // namespace
}  // namespace shardwise
