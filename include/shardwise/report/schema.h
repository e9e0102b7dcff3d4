// The version of the JSON every command's --json prints (docs/json.md). It changes whenever a
// key is renamed or a value changes shape, so a reader of saved results (report, compare, run
// --plan) can tell a result it understands from an older one.
#pragma once

namespace shardwise::report {

// 3: plan's ranked layouts carry ttft_s and tpot_s as latency objects ({mean, p50, p99});
// step-model values are unloaded_ttft_s and decode_tpot_s everywhere; recommend's latencies are
// objects with at_percentile; train's step parts and run's comm times are labelled.
inline constexpr int kSchemaVersion = 3;

}  // namespace shardwise::report
