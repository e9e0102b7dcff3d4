// Whether a serving run is degenerate: many clients in a closed loop served about one request at
// a time while the KV cache stays nearly empty, the signature of a setting (a batch limit, a
// token budget) that serialises the engine, not of the hardware. Such a run's TTFT grows with
// the clients and means nothing about the deployment the user meant.
#pragma once

#include <string>

#include "shardwise/sim/serving.h"

namespace shardwise {

// A closed loop with at least this many clients per replica is degenerate when it decodes fewer
// than kDegenerateBatch sequences at a time on average with its KV cache under
// kDegenerateKvOccupancy full.
inline constexpr double kDegenerateClients = 8;
inline constexpr double kDegenerateBatch = 2;
inline constexpr double kDegenerateKvOccupancy = 0.10;

// One line saying what ran and which setting causes it, by field (empty when the run is not
// degenerate).
std::string DegenerateRunNote(const ServingRun& run);

// A pipeline with requests waiting through the run (offline, or an open loop it falls behind)
// keeps its stages busy when its iterations are even (98.5% for Llama-3.1-405B FP8 as tp4pp4 on
// 16 H100 at fixed 9,400/650 tokens); busy below this share, its virtual engines wait on each
// other (39.5% there with MLPerf's spread lengths).
inline constexpr double kStalledPipelineBusy = 0.75;

// One line saying a pipeline's stages stalled behind uneven iterations and what evens them
// (empty when the run has no pipeline, no waiting requests, or busy stages).
std::string StalledPipelineNote(const ServingRun& run);

}  // namespace shardwise
