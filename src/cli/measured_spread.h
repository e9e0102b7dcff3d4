// The `measured` line plan and simulate print for a closed loop: where the engine's measured
// closed loops fell around shardwise's predictions, and whether that spread is assumed on this
// GPU.
#pragma once

#include <string>
#include <string_view>

#include "shardwise/perf/engine.h"

namespace shardwise::cli {

// `bands` says where the bands that cover the spread are ("the bands", "the bands in --json").
void PrintMeasuredSpread(const EngineProfile& engine, const std::string& gpu,
                         std::string_view bands);

}  // namespace shardwise::cli
