#include "measured_spread.h"

#include <fmt/format.h>

namespace shardwise::cli {
namespace {

nlohmann::json RatiosJson(const MeasuredRatios& r) { return {{"p10", r.p10}, {"p90", r.p90}}; }

}  // namespace

nlohmann::json MeasuredSpreadJson(const EngineProfile& engine) {
  const auto source = engine.sources.find("closed_loop_ttft_ratio_p10");
  return {{"engine", engine.name},
          {"ttft", RatiosJson(engine.closed_loop_ttft)},
          {"tpot", RatiosJson(engine.closed_loop_tpot)},
          {"source", source != engine.sources.end() ? source->second : std::string()}};
}

std::string MeasuredSpreadLine(const EngineProfile& engine) {
  return fmt::format(
      "measured     closed loops measured on {} ran at {:.2f}-{:.2f}x the predicted TTFT and\n"
      "             {:.2f}-{:.2f}x the TPOT (10th-90th percentile, docs/validation.md); the "
      "bands cover that\n",
      engine.name, engine.closed_loop_ttft.p10, engine.closed_loop_ttft.p90,
      engine.closed_loop_tpot.p10, engine.closed_loop_tpot.p90);
}

}  // namespace shardwise::cli
