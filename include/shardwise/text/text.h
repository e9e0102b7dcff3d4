// Text views of the API's results (api/): what the CLI prints for simulate, explain, train,
// plan, price, recommend and compare, as strings. Option names appear as backticked fields
// (`max_batch`), as in the library's messages; the CLI shows them as its flags. Pure functions;
// thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "shardwise/api/explain.h"
#include "shardwise/api/plan.h"
#include "shardwise/api/price.h"
#include "shardwise/api/recommend.h"
#include "shardwise/api/simulate.h"
#include "shardwise/api/train.h"
#include "shardwise/perf/engine.h"
#include "shardwise/report/compare.h"

namespace shardwise::text {

// The run: header, latency percentiles with bands, throughput, goodput, utilisation, cost,
// energy, KV transfer, the steady state and a closed loop's notes.
std::string SimulateText(const api::ServingReport& report, const api::SimulateRequest& request);
// One deployment per phase, aggregated or disaggregated.
std::string ExplainText(const api::Explanation& explanation);
// The ranked layouts (or one explained), the critical batch, time and cost, the sizes' front.
std::string TrainText(const api::TrainReport& report);
// The ranked layouts at the load with why each, the step model's Pareto front, and the
// aggregated-or-disaggregated verdict.
std::string PlanText(const api::PlanReport& report);
// The operating point and its price per million tokens by utilisation, break-even against an
// API's prices and the deployments a demand needs.
std::string PriceText(const api::PriceReport& report);
// The question, every candidate tried with its verdict, and the answer with its price.
std::string RecommendText(const api::RecommendReport& report);
// Two results side by side (`a` and `b` as given): the settings that differ, the metrics with
// B / A, each side's reasons and the verdict.
std::string CompareText(const report::Comparison& comparison, const std::string& a,
                        const std::string& b);
// Where `engine`'s measured closed loops fell around the predictions; `bands` says what covers
// that spread ("the bands", "the bands in --json").
std::string MeasuredSpreadText(const EngineProfile& engine, const std::string& gpu,
                               std::string_view bands);

}  // namespace shardwise::text
