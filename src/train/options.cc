#include "shardwise/train/options.h"

#include <fmt/format.h>

#include <charconv>

namespace shardwise::train {

std::string Schedule::ToString() const {
  switch (kind) {
    case ScheduleKind::k1F1B:
      return "1f1b";
    case ScheduleKind::kInterleaved:
      return fmt::format("interleaved:{}", virtual_stages);
    case ScheduleKind::kZeroBubble:
      return "zero-bubble";
  }
  return "1f1b";
}

StatusOr<Schedule> ParseSchedule(std::string_view text) {
  if (text == "1f1b") return Schedule{};
  if (text == "zero-bubble") return Schedule{ScheduleKind::kZeroBubble, 1};
  constexpr std::string_view kPrefix = "interleaved:";
  if (text.starts_with(kPrefix)) {
    const std::string_view digits = text.substr(kPrefix.size());
    int64_t v = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
    if (ec == std::errc() && end == digits.data() + digits.size() && v >= 2 && v <= 64) {
      return Schedule{ScheduleKind::kInterleaved, v};
    }
  }
  return Error(
      fmt::format("--schedule '{}' is not a schedule; use 1f1b, interleaved:V (V = 2..64 "
                  "model chunks per GPU) or zero-bubble",
                  text));
}

std::string_view RecomputeName(Recompute r) {
  switch (r) {
    case Recompute::kNone:
      return "none";
    case Recompute::kSelective:
      return "selective";
    case Recompute::kFull:
      return "full";
  }
  return "full";
}

StatusOr<Recompute> ParseRecompute(std::string_view text) {
  for (Recompute r : {Recompute::kNone, Recompute::kSelective, Recompute::kFull}) {
    if (text == RecomputeName(r)) return r;
  }
  return Error(fmt::format("--recompute '{}' is not a mode; use none, selective or full", text));
}

}  // namespace shardwise::train
