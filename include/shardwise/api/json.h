// The one JSON conversion of each result (schema 4, docs/json.md): what --json prints, what the
// HTML page and `compare` read, and what `--deployment FILE` reads back (api/saved.h). Units are
// in the keys; a latency is one object; a deployment is one object with its pools, their engine
// settings and the saved question it answers. Pure functions.
#pragma once

#include <nlohmann/json.hpp>

#include "shardwise/api/explain.h"
#include "shardwise/api/plan.h"
#include "shardwise/api/price.h"
#include "shardwise/api/recommend.h"
#include "shardwise/api/simulate.h"
#include "shardwise/api/size.h"
#include "shardwise/report/schema.h"

namespace shardwise::api {

using report::kSchemaVersion;

// A catalog model: its shape and exact parameter, KV and weight accounting (`models --json`).
nlohmann::json ToJson(const ModelSpec& model);
// A catalog GPU: datasheet numbers, board power, calibration and sources (`gpus --json`).
nlohmann::json ToJson(const GpuSpec& gpu);
nlohmann::json ToJson(const Explanation& explanation);
nlohmann::json ToJson(const ServingReport& report);
nlohmann::json ToJson(const PlanReport& report);
nlohmann::json ToJson(const PriceReport& report);
nlohmann::json ToJson(const RecommendReport& report);
nlohmann::json ToJson(const SizeReport& report);

}  // namespace shardwise::api
