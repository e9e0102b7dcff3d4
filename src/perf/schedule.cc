#include "shardwise/perf/schedule.h"

#include <algorithm>
#include <cmath>

namespace shardwise {

MicroBatches DecodeMicroBatches(double per_rank, int64_t pp) {
  MicroBatches m;
  m.count = std::min(static_cast<double>(pp), per_rank);
  m.size = std::ceil(per_rank / m.count);
  return m;
}

PipelineCycle DecodeCycle(double all_stages_s, double slowest_stage_s, double micro_batches) {
  PipelineCycle c;
  c.cycle_s = std::max(all_stages_s, micro_batches * slowest_stage_s);
  c.bubble_s = c.cycle_s - micro_batches * slowest_stage_s;
  return c;
}

double FillDrainBubbleFraction(int64_t pp, double micro_batches) {
  const double stages = static_cast<double>(pp);
  return (stages - 1) / (micro_batches + stages - 1);
}

}  // namespace shardwise
