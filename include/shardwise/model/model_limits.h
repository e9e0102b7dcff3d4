// The largest model shapes shardwise accepts from a config.json, and the check that every size
// derived from them (parameter counts, projection widths) fits in 64-bit arithmetic. The limits
// sit far above any published model (the largest hidden size is ~25k, vocabularies ~260k,
// depths ~130 layers) so they only catch typos and hostile files. Header with constants.
#pragma once

#include <cstdint>
#include <string>

#include "shardwise/common/status.h"
#include "shardwise/model/model_spec.h"

namespace shardwise {

inline constexpr int64_t kMaxModelWidth = int64_t{1} << 20;     // hidden, head_dim, MLA ranks
inline constexpr int64_t kMaxModelFfnWidth = int64_t{1} << 22;  // intermediate sizes
inline constexpr int64_t kMaxModelHeads = int64_t{1} << 14;
inline constexpr int64_t kMaxModelLayers = 4096;
inline constexpr int64_t kMaxModelExperts = int64_t{1} << 16;
inline constexpr int64_t kMaxModelVocab = int64_t{1} << 24;
inline constexpr int64_t kMaxModelContext = int64_t{1} << 30;  // positions, sliding windows
inline constexpr double kMaxModelParams = 1e15;                // a thousand times DeepSeek-V3

// Checks every dimension of `spec` against the limits above and that its parameter count,
// bounded from above with overflow-checked products, stays under kMaxModelParams; the error
// names `source` and the config key.
Status CheckModelLimits(const ModelSpec& spec, const std::string& source);

}  // namespace shardwise
