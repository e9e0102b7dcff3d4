#include "shardwise/train/schedule.h"

#include <fmt/format.h>

#include <algorithm>

namespace shardwise::train {

double BubbleFraction(const Schedule& s, int64_t pp, int64_t m) {
  const double p = static_cast<double>(pp), mb = static_cast<double>(m);
  switch (s.kind) {
    case ScheduleKind::k1F1B:
      return (p - 1) / mb;
    case ScheduleKind::kInterleaved:
      return (p - 1) / (static_cast<double>(s.virtual_stages) * mb);
    case ScheduleKind::kZeroBubble:
      return 0;
  }
  return 0;
}

double InFlightMicroBatches(const Schedule& s, int64_t pp, int64_t m) {
  const double p = static_cast<double>(pp);
  const double held = static_cast<double>(std::min(pp, m));
  if (s.kind == ScheduleKind::kInterleaved) {
    return held * (1 + (p - 1) / (p * static_cast<double>(s.virtual_stages)));
  }
  return held;
}

Status CheckSchedule(const Schedule& s, int64_t pp, int64_t m) {
  if (s.kind == ScheduleKind::k1F1B) return Status();
  if (pp < 2) {
    return Error(
        fmt::format("schedule {} needs pipeline parallelism (pp >= 2); use 1f1b or a "
                    "layout with pp",
                    s.ToString()));
  }
  if (s.kind == ScheduleKind::kZeroBubble) {
    if (m < pp) {
      return Error(
          fmt::format("zero-bubble needs at least pp = {} micro-batches per pipeline, got "
                      "{}; raise --global-batch or lower --micro-batch",
                      pp, m));
    }
    return Status();
  }
  if (m % pp != 0) {
    return Error(
        fmt::format("{} needs the micro-batches per pipeline ({}) to be a multiple of pp "
                    "({}); change --global-batch or --micro-batch",
                    s.ToString(), m, pp));
  }
  return Status();
}

}  // namespace shardwise::train
