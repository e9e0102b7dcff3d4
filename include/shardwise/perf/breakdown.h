// PhaseBreakdown: where one phase's time goes (compute, memory, each communication, bubble) and
// the work it does, per GPU of the busiest pipeline stage. The step model adds ops and
// communication into one of these; a schedule combines them. Plain value type.
#pragma once

#include <string>

namespace shardwise {

struct PhaseBreakdown {
  double compute_s = 0;  // operations limited by FLOP/s
  double memory_s = 0;   // operations limited by HBM bandwidth
  double tp_comm_s = 0;
  double ep_comm_s = 0;
  double cp_comm_s = 0;  // exposed part only
  double pp_comm_s = 0;
  double bubble_s = 0;
  double overhead_s = 0;  // per-step CPU, scheduler and launch time (engine profile)
  double flops = 0;       // per GPU of the busiest stage
  double hbm_bytes = 0;   // per GPU of the busiest stage
  double total_s = 0;
};

// into += add x times, for every field but the bubble.
void Accumulate(PhaseBreakdown& into, const PhaseBreakdown& add, double times);

// What takes the largest share of a phase: "HBM bandwidth", "FLOP/s", "TP all-reduce over
// <tp_link>", ...
std::string BoundName(const PhaseBreakdown& phase, const std::string& tp_link,
                      const std::string& ep_link);

}  // namespace shardwise
