// PhaseBreakdown: where one phase's time goes (compute, memory, each communication, bubble) and
// the work it does, per GPU of the busiest pipeline stage. The step model adds ops and
// communication into one of these; a schedule combines them. Plain value type.
#pragma once

#include <optional>
#include <string>

#include "shardwise/collective/ep_dispatch.h"

namespace shardwise {

struct PhaseBreakdown {
  double compute_s = 0;  // operations limited by FLOP/s
  double memory_s = 0;   // operations limited by HBM bandwidth
  double tp_comm_s = 0;
  double ep_comm_s = 0;
  double cp_comm_s = 0;  // exposed part only
  double pp_comm_s = 0;
  double bubble_s = 0;
  double launch_s = 0;    // kernels' fixed stream time beyond their rooflines (perf/launch.h)
  double overhead_s = 0;  // per-step CPU, scheduler and exposed host launch time (engine)
  double flops = 0;       // per GPU of the busiest stage
  double hbm_bytes = 0;   // per GPU of the busiest stage
  double total_s = 0;
  // How the MoE layers exchanged tokens (unset without EP), and whether two micro-batches
  // overlapped the exchange with compute (perf/overlap.h).
  std::optional<EpAlgorithm> ep_algorithm;
  bool two_batch_overlap = false;
};

// into += add x times, for every field but the bubble; the EP algorithm and overlap carry over
// from `add` when it has EP.
void Accumulate(PhaseBreakdown& into, const PhaseBreakdown& add, double times);

// What takes the largest share of a phase: "HBM bandwidth", "FLOP/s", "TP all-reduce over
// <tp_link>", ...
std::string BoundName(const PhaseBreakdown& phase, const std::string& tp_link,
                      const std::string& ep_link);

}  // namespace shardwise
