#include "shardwise/train/goodput.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace shardwise::train {

StatusOr<TrainingCost> CostToTrain(const TrainEstimate& e, const Reliability& r, double params,
                                   double usd_per_gpu_hour, double tokens) {
  constexpr double kHourS = 3600;
  TrainingCost t;
  const double gpus = static_cast<double>(e.layout.gpus());
  t.tokens = tokens;
  // Whole optimizer steps: the last one takes its full batch, so a budget under one batch
  // still costs a step.
  t.steps = std::ceil(tokens / static_cast<double>(e.config.TokensPerIteration()));
  t.compute_s = t.steps * e.step_s;
  t.time_s = t.compute_s;
  if (r.interruptions_per_gpu_hour > 0) {
    const double mtbi_s = kHourS / (gpus * r.interruptions_per_gpu_hour);
    // Every GPU writes its shard of the checkpoint at once.
    t.checkpoint_write_s = r.checkpoint_write_bytes_per_s_per_gpu > 0
                               ? params * r.checkpoint_bytes_per_param /
                                     (gpus * r.checkpoint_write_bytes_per_s_per_gpu)
                               : 0.0;
    t.checkpoint_interval_s = std::sqrt(2 * t.checkpoint_write_s * mtbi_s);  // Young's
    // An interruption loses the work since the last checkpoint, or since the start of a run
    // shorter than the interval: half of either on average.
    const double per_interruption_s =
        r.restart_s + std::min(t.checkpoint_interval_s, t.compute_s) / 2;
    const double left = 1 - per_interruption_s / mtbi_s;
    if (left <= 0.01) {
      return Error(fmt::format(
          "{:.0f} GPUs at {:.3g} interruptions per GPU-hour are interrupted every {:.1f} min, "
          "about as often as a restart ({:.1f} min) and the lost work ({:.1f} min) take: the run "
          "would not progress; use fewer GPUs, a lower --interruption-rate or a shorter "
          "--restart-s",
          gpus, r.interruptions_per_gpu_hour, mtbi_s / 60, r.restart_s / 60,
          (per_interruption_s - r.restart_s) / 60));
    }
    // Whole checkpoints: a run shorter than the interval writes none.
    const double checkpoints =
        t.checkpoint_interval_s > 0 ? std::floor(t.compute_s / t.checkpoint_interval_s) : 0.0;
    t.time_s = (t.compute_s + checkpoints * t.checkpoint_write_s) / left;
    t.interruptions = t.time_s / mtbi_s;
    t.lost_s = t.interruptions * per_interruption_s;
  }
  t.goodput = t.compute_s / t.time_s;
  t.gpu_hours = t.time_s * gpus / kHourS;
  t.usd = t.gpu_hours * usd_per_gpu_hour;
  return t;
}

}  // namespace shardwise::train
