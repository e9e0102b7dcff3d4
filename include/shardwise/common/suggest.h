// Nearest-name suggestions for "unknown X" errors.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace shardwise {

// Edit distance between two strings (insert, delete, substitute each cost 1).
int EditDistance(std::string_view a, std::string_view b);

// Up to `max_count` of `candidates` closest to `name`, nearest first, dropping poor matches.
std::vector<std::string> NearestNames(std::string_view name,
                                      const std::vector<std::string>& candidates,
                                      int max_count = 3);

// "unknown <what> 'name'; did you mean 'a' or 'b'? (<hint>)"
std::string UnknownNameMessage(std::string_view what, std::string_view name,
                               const std::vector<std::string>& candidates, std::string_view hint);

}  // namespace shardwise
