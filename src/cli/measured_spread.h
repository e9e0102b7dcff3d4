// Where measured closed loops fell around shardwise's predictions, per engine profile: the
// serving validation (docs/validation.md) scores each engine's closed loops, and the 10th and
// 90th percentile of measured over predicted mean TTFT and TPOT sit in the engine's profile
// (closed_loop_ttft_ratio_p10 ... tools/calibrate_bands.py). The bands of a closed loop of
// aggregated replicas (simulate and plan --concurrency) stretch to cover that spread: the
// inputs' provenance alone does not say how far the scheduling of an engine under load moves a
// prediction, the measurements do.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "shardwise/perf/engine.h"

namespace shardwise::cli {

// {"engine", "measured_on", "gpu", "ttft": {"p10", "p90", "source"}, "tpot": {...}}: `gpu` is
// the GPU predicted for; on another than the one measured the spread is an assumption.
nlohmann::json MeasuredSpreadJson(const EngineProfile& engine, const std::string& gpu);

// The text output's lines (label, text, newline), ending in `bands`: what of the output the
// spread widens ("the bands cover that", "the bands in --json cover that").
std::string MeasuredSpreadLine(const EngineProfile& engine, const std::string& gpu,
                               const std::string& bands);

}  // namespace shardwise::cli
