// The HTML report: one self-contained page (inline CSS and SVG, no network, no JavaScript)
// rendered from a command's JSON result, so `--html` and `shardwise report RESULT.json` draw
// the same data that `--json` prints. Which plots appear depends on the result's "command":
// plan (Pareto front, phase bars, decode roofline, pipeline train, cluster map, cost curves),
// explain (phases, roofline, pipeline, cluster map), simulate (TTFT/TPOT distributions, KV
// occupancy over time) and price (cost versus utilisation and duty cycle, API break-even).
// Pure functions; thread-safe.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "shardwise/common/status.h"

namespace shardwise::report {

// The marker in every page's <head>: pages with it may be overwritten by the tool.
inline constexpr const char* kGeneratorMeta = "<meta name=\"generator\" content=\"shardwise\">";

// The page for `result`; an error when the JSON is not a shardwise result the page knows.
StatusOr<std::string> RenderHtmlPage(const nlohmann::json& result);

}  // namespace shardwise::report
