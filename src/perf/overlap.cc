#include "shardwise/perf/overlap.h"

#include <algorithm>

#include "shardwise/common/check.h"

namespace shardwise {

PhaseBreakdown TwoBatchOverlap(const MicroBatchPass& pass, double sm_share_lost) {
  SW_CHECK(sm_share_lost >= 0 && sm_share_lost < 1, "TwoBatchOverlap: SM share out of [0, 1)");
  SW_CHECK(pass.moe_layers >= 1, "TwoBatchOverlap: no MoE layer to overlap");
  const PhaseBreakdown& half = pass.breakdown;
  PhaseBreakdown out;
  Accumulate(out, half, 2.0);
  // Per layer, one micro-batch's work while the exchange kernels hold their SMs, and its
  // exchange.
  const double work_s = pass.moe_work_s / (1.0 - sm_share_lost) / pass.moe_layers;
  const double exchange_s = half.ep_comm_s / pass.moe_layers;
  const double moe_s =
      pass.moe_layers * std::max(2.0 * work_s, 2.0 * exchange_s) + std::min(work_s, exchange_s);
  const double slowed_work_s = 2.0 * pass.moe_layers * work_s;
  out.compute_s += slowed_work_s - 2.0 * pass.moe_work_s;
  out.ep_comm_s = moe_s - slowed_work_s;
  out.total_s =
      out.compute_s + out.memory_s + out.launch_s + out.tp_comm_s + out.ep_comm_s + out.cp_comm_s;
  out.two_batch_overlap = true;
  return out;
}

}  // namespace shardwise
