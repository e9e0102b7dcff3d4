// NumPy .npy output (format version 1.0), so logits can be compared with any tool.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "shardwise/common/status.h"

namespace shardwise {

// Writes a C-order float32 array of `shape`.
Status WriteNpy(const std::string& path, const std::vector<float>& data,
                const std::vector<int64_t>& shape);

}  // namespace shardwise
