// Measured per-expert routing loads, as DeepSeek's EPLB takes them: how many tokens each routed
// expert received, for one MoE layer or per layer. Parsed from a user's JSON file under the input
// policy. Pure functions.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "shardwise/common/status.h"

namespace shardwise {

// A JSON array of `experts` non-negative finite loads, or an array of such arrays (one per MoE
// layer). At least one load per layer must be positive. Errors name `source`.
StatusOr<std::vector<std::vector<double>>> ParseExpertLoads(const nlohmann::json& json,
                                                            const std::string& source,
                                                            int64_t experts);

// Reads and parses a loads file.
StatusOr<std::vector<std::vector<double>>> LoadExpertLoads(const std::string& path,
                                                           int64_t experts);

}  // namespace shardwise
