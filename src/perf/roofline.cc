#include "shardwise/perf/roofline.h"

#include <cmath>

#include "shardwise/model/accounting.h"

namespace shardwise {
namespace {

constexpr int64_t kMaxBatch = 1 << 20;

// How to Think About GPUs rules with compute rate C and per-GPU bandwidth W; MoE multiplies the DP batch by
// E / k (each token uses k of E experts' weights).
CriticalSizes Critical(const ModelSpec& m, double c, double w, int64_t ep_degree) {
  CriticalSizes s;
  s.bandwidth_bytes_per_s = w;
  const double sparsity = m.is_moe() ? static_cast<double>(m.moe.num_experts) /
                                           static_cast<double>(m.moe.experts_per_token)
                                     : 1.0;
  s.dp_tokens_per_gpu = c / w * sparsity;
  const double ffn = static_cast<double>(m.is_moe() ? m.moe.expert_intermediate_size
                                                    : m.intermediate_size);
  // TP over Y ranks (How to Think About GPUs): the MLP's two matmuls take 4 B D F / Y FLOPs per GPU while
  // the all-gather and reduce-scatter of the bf16 activations move about 4 B D bytes; compute
  // hides communication while F / Y > C / W, i.e. Y < F W / C.
  s.max_tp = ffn * w / c;
  // EP over Z ranks: 6 T k D F expert FLOPs per GPU against 4 T k D (1 - 1/Z) bytes of
  // dispatch and combine: compute-bound while F > (2/3) (1 - 1/Z) C / W.
  const double z = static_cast<double>(ep_degree);
  s.ep_min_expert_ffn = 2.0 / 3.0 * (1.0 - 1.0 / z) * c / w;
  return s;
}

}  // namespace

Roofline ComputeRoofline(const ModelSpec& m, const GpuSpec& gpu, Dtype weight_dtype,
                         Dtype kv_dtype, int64_t context, int64_t gpus_per_node) {
  Roofline r;
  r.compute_dtype = gpu.ComputeDtypeFor(weight_dtype);
  const double flops_per_s = gpu.AchievableFlopsPerS(r.compute_dtype);
  const double bytes_per_s = gpu.AchievableHbmBytesPerS();
  r.ridge_flops_per_byte = flops_per_s / bytes_per_s;
  const ParamBreakdown p = CountParams(m);
  const double wbytes = BytesPerElement(weight_dtype);
  const double total = static_cast<double>(p.total);
  const double active = static_cast<double>(p.active_matmul);
  r.sweet_spot_batch = r.ridge_flops_per_byte * wbytes / 2.0 * total / active;

  const double always = total - static_cast<double>(p.routed_experts);  // read every step
  const double kv_seq = context > 0 ? SequenceCacheBytes(m, context, kv_dtype) : 0.0;
  const Flops per_token = DecodeFlopsPerToken(m, context);
  for (int64_t b = 1; b <= kMaxBatch; b *= 2) {
    RooflinePoint pt;
    pt.batch = b;
    const double tokens = static_cast<double>(b);
    // Routed experts are read when at least one token of the batch picks them.
    double experts_read = 0;
    if (m.is_moe()) {
      const double k = static_cast<double>(m.moe.experts_per_token);
      const double e = static_cast<double>(m.moe.num_experts);
      experts_read = static_cast<double>(p.routed_experts) * (1.0 - std::pow(1.0 - k / e, tokens));
    }
    pt.flops = tokens * per_token.total();
    pt.bytes = (always + experts_read) * wbytes + tokens * kv_seq;
    pt.intensity = pt.flops / pt.bytes;
    pt.attainable_flops_per_s = std::min(flops_per_s, pt.intensity * bytes_per_s);
    pt.compute_bound = pt.intensity >= r.ridge_flops_per_byte;
    if (pt.compute_bound && r.compute_bound_batch == 0) r.compute_bound_batch = b;
    r.points.push_back(pt);
    if (b >= 4 * static_cast<int64_t>(r.sweet_spot_batch) && b >= 1024 && r.compute_bound_batch) break;
  }
  const double peak = gpu.PeakFlopsPerS(r.compute_dtype);
  r.intra_node = Critical(m, peak, gpu.scale_up_bytes_per_s, r.ep_degree);
  // Across nodes a ring gets the node's egress (How to Think About GPUs): GPUs per node x NIC.
  r.inter_node = Critical(m, peak, gpu.nic_bytes_per_s * static_cast<double>(gpus_per_node), r.ep_degree);
  // Expert all-to-all goes through each GPU's own NIC, not the node's aggregate.
  r.inter_node.ep_min_expert_ffn =
      2.0 / 3.0 * (1.0 - 1.0 / static_cast<double>(r.ep_degree)) * peak / gpu.nic_bytes_per_s;
  return r;
}

}  // namespace shardwise
