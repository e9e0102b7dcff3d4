// `explain` of a disaggregated deployment: the prefill pool's phase (one prompt, and its
// rate at full load), the KV transfer between the pools, and the decode pool's phase at a
// batch, with the requests per second each pool serves and the worker ratio that balances them.
#pragma once

#include <cstdint>

#include "disagg_options.h"
#include "html_output.h"
#include "shardwise/common/status.h"
#include "shardwise/model/model_spec.h"
#include "shardwise/perf/options.h"

namespace shardwise::cli {

// `batch`: sequences per decode worker; `context`: prompt and decode KV length.
Status ExplainDisaggregated(const ModelSpec& model, const DisaggSetup& setup,
                            const PerfOptions& perf, int64_t batch, int64_t context, int64_t osl,
                            bool json, const HtmlOptions& html);

}  // namespace shardwise::cli
