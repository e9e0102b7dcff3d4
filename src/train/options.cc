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
      fmt::format("`schedule` '{}' is not a schedule; use 1f1b, interleaved:V (V = 2..64 "
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

Status ParseRecompute(std::string_view text, TrainConfig& config) {
  for (Recompute r : {Recompute::kNone, Recompute::kSelective, Recompute::kFull}) {
    if (text == RecomputeName(r)) {
      config.recompute = r;
      config.recompute_layers = 0;
      return Status();
    }
  }
  constexpr std::string_view kPrefix = "full:";
  if (text.starts_with(kPrefix)) {
    const std::string_view digits = text.substr(kPrefix.size());
    int64_t n = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
    if (ec == std::errc() && end == digits.data() + digits.size() && n >= 1 && n <= 1000) {
      config.recompute = Recompute::kFull;
      config.recompute_layers = n;
      return Status();
    }
  }
  return Error(
      fmt::format("`recompute` '{}' is not a mode; use none, selective, full, or full:N to "
                  "recompute N layers of each model chunk",
                  text));
}

std::string TrainConfig::RecomputeText() const {
  if (recompute == Recompute::kFull && recompute_layers > 0) {
    return fmt::format("full:{}", recompute_layers);
  }
  return std::string(RecomputeName(recompute));
}

std::string_view Fp8RecipeName(Fp8Recipe r) {
  switch (r) {
    case Fp8Recipe::kDelayed:
      return "delayed";
    case Fp8Recipe::kCurrent:
      return "current";
    case Fp8Recipe::kBlockwise:
      return "blockwise";
    case Fp8Recipe::kMxfp8:
      return "mxfp8";
  }
  return "current";
}

StatusOr<Fp8Recipe> ParseFp8Recipe(std::string_view text) {
  for (Fp8Recipe r :
       {Fp8Recipe::kDelayed, Fp8Recipe::kCurrent, Fp8Recipe::kBlockwise, Fp8Recipe::kMxfp8}) {
    if (text == Fp8RecipeName(r)) return r;
  }
  return Error(
      fmt::format("`fp8_recipe` '{}' is not a recipe; use delayed, current (FP8-CS), blockwise "
                  "or mxfp8 (FP8-MX)",
                  text));
}

std::string TrainConfig::PrecisionName() const {
  if (dtype != Dtype::kFp8) return std::string(DtypeName(dtype));
  return fmt::format("fp8-{}", Fp8RecipeName(fp8_recipe));
}

}  // namespace shardwise::train
