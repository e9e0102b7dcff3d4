// GpuSpec: one accelerator's datasheet numbers and its calibrated achievable fractions, read
// from data/gpus/*.json (or a user file of the same form). Every number in a catalog file must
// have its source in the file's "sources" object; the parser rejects a file that lacks one.
// Plain value type.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "shardwise/common/provenance.h"
#include "shardwise/common/status.h"
#include "shardwise/model/dtype.h"

namespace shardwise {

struct GpuSpec {
  std::string name;
  std::string description;
  std::map<Dtype, double> peak_flops_per_s;  // dense tensor-core peak per dtype
  double hbm_bytes = 0;
  double hbm_bytes_per_s = 0;
  double scale_up_bytes_per_s = 0;  // per direction, GPU into its NVLink/IF/PCIe domain
  std::string scale_up;             // what the scale-up link is
  double nic_bytes_per_s = 0;       // per direction, scale-out bandwidth per GPU
  double usd_per_gpu_hour = 0;
  // The board's rated maximum power (TDP, or AMD's TBP), watts: what an operator provisions per
  // GPU and an upper bound on its draw while serving; 0 when the file does not state it.
  double board_power_w = 0;
  int64_t sm_count = 0;                   // streaming multiprocessors (compute units)
  std::map<Dtype, double> gemm_fraction;  // achievable fraction of peak, large-GEMM limit
  // Per-tile fixed cost in K-elements of work, per input dtype (a dtype without its own entry
  // uses bf16's): the time to write an output tile, counted at that dtype's rate, so it grows
  // with the rate (data/validation/h100-gemm-k-sweep.txt: bf16 260, fp8 500 on an H100).
  std::map<Dtype, double> gemm_tile_overhead_k;
  double hbm_fraction = 0;  // achievable fraction of HBM bandwidth (STREAM copy)
  // Fixed stream time of one kernel inside a CUDA graph besides its work: launch, first memory
  // round trip, drain of its last wave (perf/launch.h).
  double kernel_latency_s = 0;
  bool calibration_measured = false;  // fractions measured on this part (else assumed)
  std::map<std::string, std::string> sources;
  // Provenance of the numbers the file states it for (its "provenance" object).
  std::map<std::string, Provenance> provenance;

  bool Supports(Dtype dtype) const { return peak_flops_per_s.contains(dtype); }
  double PeakFlopsPerS(Dtype dtype) const;  // requires Supports(dtype)
  double TileOverheadK(Dtype dtype) const;  // gemm_tile_overhead_k's entry, else bf16's, else 0
  double AchievableFlopsPerS(Dtype dtype) const;  // peak x gemm fraction (large GEMMs)
  // Achieved fraction of peak for an [m x k] x [k x n] GEMM: the large-GEMM fraction times
  // wave quantisation of the output tiles over the SMs (split-K filling idle SMs) times
  // k / (k + tile overhead).
  double GemmEfficiency(Dtype dtype, double m, double n, double k) const;
  // The large-GEMM fraction and tile overhead of a format, looked up once for many GEMMs.
  struct GemmCalibration {
    double fraction = 0;
    double tile_overhead_k = 0;
  };
  GemmCalibration GemmCalibrationFor(Dtype dtype) const;
  double GemmEfficiency(const GemmCalibration& calibration, double m, double n, double k) const;
  double AchievableHbmBytesPerS() const { return hbm_bytes_per_s * hbm_fraction; }
  // The tensor-core format a GEMM with weights in `weights` runs in: the weight format when
  // supported, else the nearest wider one (int4/mxfp4 weights on Hopper run as fp8; fp8 weights
  // on A100 as bf16).
  Dtype ComputeDtypeFor(Dtype weights) const;
  // Where a number of this file comes from: what its "provenance" object states (one format's
  // GEMM fraction as "gemm_fraction.fp8", else as "gemm_fraction"); else the
  // calibrated fractions are measured when "achievable.measured" says so (assumed otherwise),
  // the per-kernel latency is assumed, and datasheet numbers are measured (published).
  Provenance ProvenanceOf(const std::string& key) const;
  // The provenance key of one format's GEMM fraction: "gemm_fraction.fp8".
  static std::string GemmFractionKey(Dtype dtype);
};

StatusOr<GpuSpec> ParseGpuSpec(const nlohmann::json& json, const std::string& source);

// Names of the built-in GPUs, sorted.
std::vector<std::string> BuiltinGpuNames();
// A built-in GPU by name or a GPU file by path; unknown names suggest the nearest.
StatusOr<GpuSpec> LoadGpu(std::string_view name_or_path);
StatusOr<std::vector<GpuSpec>> LoadBuiltinGpus();

}  // namespace shardwise
