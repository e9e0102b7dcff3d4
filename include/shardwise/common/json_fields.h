// Typed reads of JSON object fields with one-line errors that name the file and the key.
// Used by every parser of user-editable input (config.json, GPU, cluster and profile files).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "shardwise/common/input_policy.h"
#include "shardwise/common/status.h"

namespace shardwise {

// A JSON object together with the name of where it came from, for error messages.
struct JsonObject {
  const nlohmann::json& json;
  std::string source;  // e.g. "config.json" or "gpus/h100-sxm.json"

  bool Has(std::string_view key) const;  // present and not null
  // Integers: required and > 0, or optional and >= 0; at most `max` (named in the error).
  StatusOr<int64_t> Int(std::string_view key, int64_t max = kNoMax) const;
  StatusOr<int64_t> IntOr(std::string_view key, int64_t fallback, int64_t max = kNoMax) const;
  StatusOr<double> Number(std::string_view key) const;        // required, finite, > 0
  StatusOr<double> NumberOr(std::string_view key, double fallback) const;  // optional, >= 0
  StatusOr<bool> BoolOr(std::string_view key, bool fallback) const;
  StatusOr<std::string> String(std::string_view key) const;
  Status MissingKey(std::string_view key) const;

  static constexpr int64_t kNoMax = INT64_MAX;
};

// A JSON value quoted in a one-line error: compact, at most ~60 printable characters.
std::string Excerpt(const nlohmann::json& value);

// Parses JSON text; the error names `source` and the line of the syntax error. Never throws:
// numbers beyond double range (1e999), nesting deeper than kMaxJsonDepth and invalid UTF-8
// are errors.
StatusOr<nlohmann::json> ParseJsonText(const std::string& text, const std::string& source);

// Reads and parses a JSON file from disk under the input policy for `kind`.
StatusOr<nlohmann::json> ReadJsonFile(const std::string& path, const InputKind& kind = kJsonInput);

}  // namespace shardwise
