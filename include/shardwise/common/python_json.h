// JSON as Python writes it: config.json files and the serving benchmarks' results.
#pragma once

#include <string>

namespace shardwise {

// Rewrites the bare literals NaN, Infinity and -Infinity that Python's json module emits for
// non-finite floats (not valid JSON) as the strings "NaN", "Infinity", "-Infinity", leaving
// string contents untouched. Any reader of such a key then reports "must be a number".
std::string QuoteNonFiniteLiterals(const std::string& text);

}  // namespace shardwise
