// Numbers as users write them on the command line: counts with a decimal or binary suffix.
#pragma once

#include <optional>
#include <string>

#include "shardwise/common/status.h"

namespace shardwise::cli {

// A number with an optional suffix K, M, G or T worth step, step^2, step^3, step^4 (and B =
// G when `b_is_giga`: "300B" tokens); empty when `text` is not such a number or not finite.
std::optional<double> ParseScaledNumber(const std::string& text, double step, bool b_is_giga);

// Parses a byte count with an optional binary suffix, as nccl-tests does: 8, 512K, 1M, 8G.
StatusOr<double> ParseByteSize(const std::string& text, const std::string& option);

}  // namespace shardwise::cli
