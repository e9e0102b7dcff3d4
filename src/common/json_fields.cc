#include "shardwise/common/json_fields.h"

#include <fmt/format.h>

#include <cmath>

#include "shardwise/common/checked_math.h"

namespace shardwise {

using nlohmann::json;

bool JsonObject::Has(std::string_view key) const {
  auto it = json.find(key);
  return it != json.end() && !it->is_null();
}

Status JsonObject::MissingKey(std::string_view key) const {
  return Error(fmt::format("{}: required key '{}' is missing", source, key));
}

StatusOr<int64_t> JsonObject::IntOr(std::string_view key, int64_t fallback, int64_t max) const {
  if (!Has(key)) return fallback;
  const nlohmann::json& v = json.at(key);
  const auto too_large = [&] {
    return Error(fmt::format("{}: '{}' ({}) is larger than the largest accepted, {}", source, key,
                             Excerpt(v), max));
  };
  int64_t value = 0;
  if (v.is_number_unsigned()) {
    if (v.get<uint64_t>() > static_cast<uint64_t>(max)) return too_large();
    value = static_cast<int64_t>(v.get<uint64_t>());
  } else if (v.is_number_integer()) {
    value = v.get<int64_t>();
  } else if (v.is_number_float() && std::floor(v.get<double>()) == v.get<double>()) {
    const double d = v.get<double>();  // finite: the parser refuses numbers out of range
    if (d > static_cast<double>(max) || !FitsInt64(d)) {
      return d > 0 ? too_large()
                   : Error(fmt::format("{}: '{}' must not be negative, got {}", source, key,
                                       Excerpt(v)));
    }
    value = static_cast<int64_t>(d);
  } else {
    return Error(fmt::format("{}: '{}' must be an integer, got {}", source, key, Excerpt(v)));
  }
  if (value < 0) {
    return Error(fmt::format("{}: '{}' must not be negative, got {}", source, key, value));
  }
  if (value > max) return too_large();
  return value;
}

StatusOr<int64_t> JsonObject::Int(std::string_view key, int64_t max) const {
  if (!Has(key)) return MissingKey(key);
  SW_ASSIGN_OR_RETURN(int64_t value, IntOr(key, 0, max));
  if (value <= 0) {
    return Error(fmt::format("{}: '{}' must be positive, got {}", source, key, value));
  }
  return value;
}

StatusOr<double> JsonObject::NumberOr(std::string_view key, double fallback) const {
  if (!Has(key)) return fallback;
  const nlohmann::json& v = json.at(key);
  if (!v.is_number()) {
    return Error(fmt::format("{}: '{}' must be a number, got {}", source, key, Excerpt(v)));
  }
  const double value = v.get<double>();
  if (!std::isfinite(value) || value < 0) {
    return Error(fmt::format("{}: '{}' must be a finite non-negative number, got {}", source, key,
                             Excerpt(v)));
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
    return Error(fmt::format("{}: '{}' must be true or false, got {}", source, key, Excerpt(v)));
  }
  return v.get<bool>();
}

StatusOr<std::string> JsonObject::String(std::string_view key) const {
  if (!Has(key)) return MissingKey(key);
  const nlohmann::json& v = json.at(key);
  if (!v.is_string()) {
    return Error(fmt::format("{}: '{}' must be a string, got {}", source, key, Excerpt(v)));
  }
  return v.get<std::string>();
}

std::string Excerpt(const json& value) {
  return Printable(value.dump(-1, ' ', false, json::error_handler_t::replace), 60);
}

StatusOr<json> ParseJsonText(const std::string& text, const std::string& source) {
  SW_RETURN_IF_ERROR(CheckJsonDepth(text, source));
  try {
    return json::parse(text);
  } catch (const json::exception& e) {
    // e.what() is "[json.exception.parse_error.101] parse error at line 3, column 5: ..." or
    // "[json.exception.out_of_range.406] number overflow parsing '1e999'".
    std::string what = e.what();
    const size_t bracket = what.find("] ");
    if (bracket != std::string::npos) what = what.substr(bracket + 2);
    return Error(fmt::format("{}: not valid JSON ({})", source, Printable(what, 160)));
  }
}

StatusOr<json> ReadJsonFile(const std::string& path, const InputKind& kind) {
  SW_ASSIGN_OR_RETURN(std::string text, ReadBoundedFile(path, kind));
  return ParseJsonText(text, Printable(path, 200));
}

}  // namespace shardwise
