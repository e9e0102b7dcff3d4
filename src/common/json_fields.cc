#include "shardwise/common/json_fields.h"

#include <cmath>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

namespace shardwise {

using nlohmann::json;

bool JsonObject::Has(std::string_view key) const {
  auto it = json.find(key);
  return it != json.end() && !it->is_null();
}

Status JsonObject::MissingKey(std::string_view key) const {
  return Error(fmt::format("{}: required key '{}' is missing", source, key));
}

StatusOr<int64_t> JsonObject::IntOr(std::string_view key, int64_t fallback) const {
  if (!Has(key)) return fallback;
  const nlohmann::json& v = json.at(key);
  if (!v.is_number_integer() && !(v.is_number_float() && std::floor(v.get<double>()) == v.get<double>())) {
    return Error(fmt::format("{}: '{}' must be an integer, got {}", source, key, v.dump()));
  }
  const int64_t value = v.is_number_integer() ? v.get<int64_t>() : static_cast<int64_t>(v.get<double>());
  if (value < 0) {
    return Error(fmt::format("{}: '{}' must not be negative, got {}", source, key, value));
  }
  return value;
}

StatusOr<int64_t> JsonObject::Int(std::string_view key) const {
  if (!Has(key)) return MissingKey(key);
  SW_ASSIGN_OR_RETURN(int64_t value, IntOr(key, 0));
  if (value <= 0) {
    return Error(fmt::format("{}: '{}' must be positive, got {}", source, key, value));
  }
  return value;
}

StatusOr<double> JsonObject::NumberOr(std::string_view key, double fallback) const {
  if (!Has(key)) return fallback;
  const nlohmann::json& v = json.at(key);
  if (!v.is_number()) {
    return Error(fmt::format("{}: '{}' must be a number, got {}", source, key, v.dump()));
  }
  const double value = v.get<double>();
  if (!std::isfinite(value) || value < 0) {
    return Error(fmt::format("{}: '{}' must be a finite non-negative number, got {}", source, key,
                             v.dump()));
  }
  return value;
}

StatusOr<double> JsonObject::Number(std::string_view key) const {
  if (!Has(key)) return MissingKey(key);
  SW_ASSIGN_OR_RETURN(double value, NumberOr(key, 0.0));
  if (value <= 0) {
    return Error(fmt::format("{}: '{}' must be positive, got {}", source, key, value));
  }
  return value;
}

StatusOr<bool> JsonObject::BoolOr(std::string_view key, bool fallback) const {
  if (!Has(key)) return fallback;
  const nlohmann::json& v = json.at(key);
  if (!v.is_boolean()) {
    return Error(fmt::format("{}: '{}' must be true or false, got {}", source, key, v.dump()));
  }
  return v.get<bool>();
}

StatusOr<std::string> JsonObject::String(std::string_view key) const {
  if (!Has(key)) return MissingKey(key);
  const nlohmann::json& v = json.at(key);
  if (!v.is_string()) {
    return Error(fmt::format("{}: '{}' must be a string, got {}", source, key, v.dump()));
  }
  return v.get<std::string>();
}

StatusOr<json> ParseJsonText(const std::string& text, const std::string& source) {
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    // e.what() is "[json.exception.parse_error.101] parse error at line 3, column 5: ..."
    std::string what = e.what();
    const size_t at = what.find("parse error");
    if (at != std::string::npos) what = what.substr(at);
    return Error(fmt::format("{}: not valid JSON ({})", source, what));
  }
}

StatusOr<json> ReadJsonFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Error(fmt::format("{}: cannot open file (check the path)", path));
  std::stringstream buffer;
  buffer << in.rdbuf();
  return ParseJsonText(buffer.str(), path);
}

}  // namespace shardwise
