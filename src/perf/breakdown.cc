#include "shardwise/perf/breakdown.h"

namespace shardwise {

void Accumulate(PhaseBreakdown& into, const PhaseBreakdown& add, double times) {
  into.compute_s += add.compute_s * times;
  into.memory_s += add.memory_s * times;
  into.tp_comm_s += add.tp_comm_s * times;
  into.ep_comm_s += add.ep_comm_s * times;
  into.cp_comm_s += add.cp_comm_s * times;
  into.pp_comm_s += add.pp_comm_s * times;
  into.launch_s += add.launch_s * times;
  into.overhead_s += add.overhead_s * times;
  into.flops += add.flops * times;
  into.hbm_bytes += add.hbm_bytes * times;
  into.total_s += add.total_s * times;
  if (add.ep_algorithm) {
    into.ep_algorithm = add.ep_algorithm;
    into.two_batch_overlap = add.two_batch_overlap;
  }
}

std::string BoundName(const PhaseBreakdown& e, const std::string& tp_link,
                      const std::string& ep_link) {
  struct Part {
    double s;
    std::string name;
  };
  const Part parts[] = {{e.memory_s, "HBM bandwidth"},
                        {e.compute_s, "FLOP/s"},
                        {e.tp_comm_s, "TP all-reduce over " + tp_link},
                        {e.ep_comm_s, "EP all-to-all over " + ep_link},
                        {e.cp_comm_s, "CP exchange"},
                        {e.pp_comm_s, "PP send/recv"},
                        {e.bubble_s, "pipeline bubble"},
                        {e.launch_s, "kernel launch latency"},
                        {e.overhead_s, "per-step CPU overhead"}};
  const Part* top = &parts[0];
  for (const Part& p : parts) {
    if (p.s > top->s) top = &p;
  }
  return top->name;
}

}  // namespace shardwise
