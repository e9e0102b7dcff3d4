// The `measured` line of a closed loop's text (plan, simulate): where the engine's measured
// closed loops fell around the predictions, and whether that spread is assumed (on this GPU, or
// for this profile).
#include <fmt/format.h>

#include "shardwise/text/text.h"

namespace shardwise::text {

std::string MeasuredSpreadText(const EngineProfile& engine, const std::string& gpu,
                               std::string_view bands) {
  std::string out = fmt::format(
      "measured     closed loops of {} (every version measured) on {} ran at {:.2f}-{:.2f}x the\n"
      "             predicted TTFT and {:.2f}-{:.2f}x the TPOT (10th-90th percentile,\n"
      "             docs/validation/serving-under-load.md); {} cover that\n",
      engine.engine, engine.closed_loop_measured_on, engine.closed_loop_ttft.p10,
      engine.closed_loop_ttft.p90, engine.closed_loop_tpot.p10, engine.closed_loop_tpot.p90, bands);
  if (engine.ClosedLoopSpreadAssumed()) {
    out += fmt::format("             for the {} profile that spread is assumed, not measured\n",
                       engine.name);
  } else if (gpu != engine.closed_loop_measured_on) {
    out += fmt::format("             on {} that spread is an assumption\n", gpu);
  }
  return out;
}

}  // namespace shardwise::text
