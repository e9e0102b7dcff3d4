// JSON as Python writes it (private to src/model).
#pragma once

#include <string>

namespace shardwise::model_internal {

// Rewrites the bare literals NaN, Infinity and -Infinity that Python's json module emits for
// non-finite floats (not valid JSON) as the strings "NaN", "Infinity", "-Infinity", leaving
// string contents untouched. Any reader of such a key then reports "must be a number".
std::string QuoteNonFiniteLiterals(const std::string& text);

}  // namespace shardwise::model_internal
