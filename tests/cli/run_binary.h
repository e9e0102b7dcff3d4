// Runs the real shardwise binary as a user would and captures what it printed. For end-to-end
// tests only. SHARDWISE_BINARY is the built binary's path (set by tests/CMakeLists.txt).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace shardwise::testing {

struct RunResult {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
  nlohmann::json Json() const { return nlohmann::json::parse(out); }
};

// Runs `shardwise <args>` (args are passed through the shell unquoted) and waits for it.
RunResult RunShardwise(const std::string& args);

// The bytes of the file at `path` ("" when it cannot be read).
std::string Slurp(const std::string& path);

// Counts the lines of `text`.
int LineCount(const std::string& text);

// The pool of a result's "deployment" object with `role` (aggregated, prefill or decode;
// docs/json.md); null when it has none.
nlohmann::json PoolOf(const nlohmann::json& result, const std::string& role);

// Bad input: exit code 2 and exactly one line on stderr containing `fragment`.
void ExpectOneLineError(const RunResult& r, const std::string& fragment);

}  // namespace shardwise::testing
