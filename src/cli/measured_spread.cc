#include "measured_spread.h"

#include <fmt/format.h>

namespace shardwise::cli {
namespace {

// {"p10", "p90", "source"} of the profile fields "<prefix>_p10" and "<prefix>_p90".
nlohmann::json RatiosJson(const EngineProfile& engine, const MeasuredRatios& r,
                          const std::string& prefix) {
  const auto source = engine.sources.find(prefix + "_p10");
  return {{"p10", r.p10},
          {"p90", r.p90},
          {"source", source != engine.sources.end() ? source->second : std::string()}};
}

}  // namespace

nlohmann::json MeasuredSpreadJson(const EngineProfile& engine, const std::string& gpu) {
  return {{"engine", engine.name},
          {"measured_on", engine.closed_loop_measured_on},
          {"gpu", gpu},
          {"ttft", RatiosJson(engine, engine.closed_loop_ttft, "closed_loop_ttft_ratio")},
          {"tpot", RatiosJson(engine, engine.closed_loop_tpot, "closed_loop_tpot_ratio")}};
}

std::string MeasuredSpreadLine(const EngineProfile& engine, const std::string& gpu,
                               const std::string& bands) {
  std::string text = fmt::format(
      "measured     closed loops of {} measured on {} ran at {:.2f}-{:.2f}x the predicted TTFT\n"
      "             and {:.2f}-{:.2f}x the TPOT (10th-90th percentile, docs/validation.md); {}\n",
      engine.name, engine.closed_loop_measured_on, engine.closed_loop_ttft.p10,
      engine.closed_loop_ttft.p90, engine.closed_loop_tpot.p10, engine.closed_loop_tpot.p90, bands);
  if (gpu != engine.closed_loop_measured_on) {
    text += fmt::format("             on {} that spread is an assumption\n", gpu);
  }
  return text;
}

}  // namespace shardwise::cli
