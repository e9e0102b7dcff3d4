// Ops: the compute and memory cost of one operation on one GPU by the roofline,
// max(FLOPs / achievable FLOP/s, bytes / achievable HBM bandwidth), so small-M decode GEMMs come
// out memory-bound. GEMMs take their shape-dependent efficiency from the GPU; element-wise
// passes are pure HBM traffic. OpCoster holds one GPU's rates for one set of numeric formats;
// it is a value type and its methods are const (thread-safe).
#pragma once

#include <vector>

#include "shardwise/hw/gpu.h"
#include "shardwise/perf/breakdown.h"
#include "shardwise/perf/options.h"
#include "shardwise/perf/shard.h"

namespace shardwise {

class OpCoster {
 public:
  OpCoster() = default;
  OpCoster(const GpuSpec& gpu, const PerfOptions& options);

  // Adds one roofline op to `out` and returns its time.
  double Roofline(double flops, double bytes, double flops_per_s, PhaseBreakdown& out) const;
  // Runs `gemms` on `m` rows each (`copies` of them launched as one grouped GEMM, e.g. the
  // experts a GPU holds); weight bytes are read for `weight_copies` of them.
  void Gemms(const std::vector<GemmShape>& gemms, double m, double copies, double weight_copies,
             PhaseBreakdown& out) const;
  // Element-wise passes of one layer over `tokens` (residual adds, norms, activation);
  // `fused_norms`: the engine fuses the norms into the TP all-reduce.
  void Elementwise(double tokens, double hidden, double ffn_width, bool fused_norms,
                   PhaseBreakdown& out) const;
  double attention_flops_per_s() const { return attention_flops_per_s_; }

 private:
  const GpuSpec* gpu_ = nullptr;
  Dtype weight_dtype_ = Dtype::kBf16;
  Dtype activation_dtype_ = Dtype::kBf16;
  Dtype weight_compute_dtype_ = Dtype::kBf16;
  GpuSpec::GemmCalibration weight_gemm_;  // of weight_compute_dtype_
  double weight_peak_flops_per_s_ = 0;
  double attention_flops_per_s_ = 0;
  double hbm_bytes_per_s_ = 0;
};

}  // namespace shardwise
