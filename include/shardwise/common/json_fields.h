// Typed reads of JSON object fields with one-line errors that name the file and the key.
// Used by every parser of user-editable input (config.json, GPU, cluster and profile files).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "shardwise/common/status.h"

namespace shardwise {

// A JSON object together with the name of where it came from, for error messages.
struct JsonObject {
  const nlohmann::json& json;
  std::string source;  // e.g. "config.json" or "gpus/h100-sxm.json"

  bool Has(std::string_view key) const;  // present and not null
  StatusOr<int64_t> Int(std::string_view key) const;          // required, > 0
  StatusOr<int64_t> IntOr(std::string_view key, int64_t fallback) const;  // optional, >= 0
  StatusOr<double> Number(std::string_view key) const;        // required, finite, > 0
  StatusOr<double> NumberOr(std::string_view key, double fallback) const;  // optional, >= 0
  StatusOr<bool> BoolOr(std::string_view key, bool fallback) const;
  StatusOr<std::string> String(std::string_view key) const;
  Status MissingKey(std::string_view key) const;
};

// Parses JSON text; the error names `source` and the line of the syntax error.
StatusOr<nlohmann::json> ParseJsonText(const std::string& text, const std::string& source);

// Reads and parses a JSON file from disk.
StatusOr<nlohmann::json> ReadJsonFile(const std::string& path);

}  // namespace shardwise
