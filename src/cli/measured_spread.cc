#include "measured_spread.h"

#include <fmt/format.h>

#include <iostream>

namespace shardwise::cli {

void PrintMeasuredSpread(const EngineProfile& engine, const std::string& gpu,
                         std::string_view bands) {
  std::cout << fmt::format(
      "measured     closed loops of {} measured on {} ran at {:.2f}-{:.2f}x the predicted TTFT\n"
      "             and {:.2f}-{:.2f}x the TPOT (10th-90th percentile, docs/validation.md); {} "
      "cover that\n",
      engine.name, engine.closed_loop_measured_on, engine.closed_loop_ttft.p10,
      engine.closed_loop_ttft.p90, engine.closed_loop_tpot.p10, engine.closed_loop_tpot.p90, bands);
  if (gpu != engine.closed_loop_measured_on) {
    std::cout << fmt::format("             on {} that spread is an assumption\n", gpu);
  }
}

}  // namespace shardwise::cli
