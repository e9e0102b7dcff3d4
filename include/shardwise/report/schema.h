// The version of the JSON every command's --json prints (docs/json.md). It changes whenever a
// key is renamed or a value changes shape, so a reader of saved results (report, compare, run
// --plan) can tell a result it understands from an older one.
#pragma once

namespace shardwise::report {

// 4: one application layer (api/) writes every serving command's JSON: latencies carry at_slo
// (the SLO's percentile) and max; a deployment is one object (name, disaggregated, gpus,
// usd_per_hour, pools with their engine settings, saved request); plan's comparison of
// aggregated and disaggregated is under verdict; price's points are all-in $/Mtok with the
// input and output shares beside it.
// 3: plan's ranked layouts carry ttft_s and tpot_s as latency objects ({mean, p50, p99});
// step-model values are unloaded_ttft_s and decode_tpot_s everywhere; recommend's latencies are
// objects with at_percentile; train's step parts and run's comm times are labelled.
inline constexpr int kSchemaVersion = 4;

}  // namespace shardwise::report
