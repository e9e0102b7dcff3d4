#include "shardwise/perf/ops.h"

#include <algorithm>

namespace shardwise {
namespace {

// Element-wise traffic per token and layer besides the GEMMs, in tensors read or written:
// two fused residual-add + RMSNorm passes (read x and residual, write both: 4 hidden-sized
// tensors each) and the SwiGLU activation (read gate and up, write their product: 3 FFN-width).
constexpr double kElementwiseHiddenTensors = 8.0;
constexpr double kElementwiseFfnTensors = 3.0;

}  // namespace

OpCoster::OpCoster(const GpuSpec& gpu, const PerfOptions& options)
    : gpu_(&gpu),
      weight_dtype_(options.weight_dtype),
      activation_dtype_(options.activation_dtype),
      weight_compute_dtype_(gpu.ComputeDtypeFor(options.weight_dtype)),
      weight_gemm_(gpu.GemmCalibrationFor(weight_compute_dtype_)),
      weight_peak_flops_per_s_(gpu.PeakFlopsPerS(weight_compute_dtype_)),
      attention_flops_per_s_(gpu.AchievableFlopsPerS(gpu.ComputeDtypeFor(options.kv_dtype)) *
                             options.engine.attention_efficiency),
      hbm_bytes_per_s_(gpu.AchievableHbmBytesPerS()) {}

double OpCoster::Roofline(double flops, double bytes, double flops_per_s,
                          PhaseBreakdown& out) const {
  const double compute = flops / flops_per_s;
  const double memory = bytes / hbm_bytes_per_s_;
  out.flops += flops;
  out.hbm_bytes += bytes;
  (compute >= memory ? out.compute_s : out.memory_s) += std::max(compute, memory);
  return std::max(compute, memory);
}

void OpCoster::Gemms(const std::vector<GemmShape>& gemms, double m, double copies,
                     double weight_copies, PhaseBreakdown& out) const {
  if (m <= 0) return;
  const double wbytes = BytesPerElement(weight_dtype_);
  const double abytes = BytesPerElement(activation_dtype_);
  for (const GemmShape& g : gemms) {
    // The copies run as one grouped GEMM (the experts of a MoE layer): their output tiles share
    // the SMs as those of one GEMM `copies` times as wide would.
    const double rate =
        weight_peak_flops_per_s_ * gpu_->GemmEfficiency(weight_gemm_, m, g.n * copies, g.k);
    Roofline(2 * m * g.n * g.k * copies,
             g.n * g.k * (g.weight_bytes_per_param > 0 ? g.weight_bytes_per_param : wbytes) *
                     weight_copies +
                 m * (g.n + g.k) * abytes * copies,
             rate, out);
  }
}

void OpCoster::Elementwise(double tokens, double hidden, double ffn_width, bool fused_norms,
                           PhaseBreakdown& out) const {
  // A norm fused into the all-reduce kernel reads the reduced sum in registers: it saves the
  // separate pass's read of the sum and its write, half of each norm's traffic.
  const double hidden_tensors =
      fused_norms ? kElementwiseHiddenTensors / 2 : kElementwiseHiddenTensors;
  const double bytes = tokens * (hidden_tensors * hidden + kElementwiseFfnTensors * ffn_width) *
                       BytesPerElement(activation_dtype_);
  Roofline(0, bytes, 1, out);
}

}  // namespace shardwise
