#include "numbers.h"

#include <fmt/format.h>

#include <cctype>
#include <cmath>

#include "shardwise/common/decimal.h"

namespace shardwise::cli {

std::optional<double> ParseScaledNumber(const std::string& text, double step, bool b_is_giga) {
  if (text.empty()) return std::nullopt;
  int power = 0;
  switch (std::toupper(static_cast<unsigned char>(text.back()))) {
    case 'K':
      power = 1;
      break;
    case 'M':
      power = 2;
      break;
    case 'B':
      power = b_is_giga ? 3 : 0;
      break;
    case 'G':
      power = 3;
      break;
    case 'T':
      power = 4;
      break;
    default:
      break;
  }
  const std::string digits = power > 0 ? text.substr(0, text.size() - 1) : text;
  const std::optional<double> value = ParseDecimal(digits);
  if (!value) return std::nullopt;
  const double scaled = *value * std::pow(step, power);
  if (!std::isfinite(scaled)) return std::nullopt;
  return scaled;
}

StatusOr<double> ParseByteSize(const std::string& text, const std::string& option) {
  if (text.empty()) return Error(fmt::format("{} needs a size such as 8, 64K, 1M or 8G", option));
  const std::optional<double> parsed = ParseScaledNumber(text, 1024.0, false);
  if (!parsed) {
    return Error(
        fmt::format("{} '{}' is not a size; use a number with an optional K, M, G or T "
                    "suffix (binary, as nccl-tests)",
                    option, text));
  }
  const double bytes = *parsed;
  if (bytes < 1 || bytes > 1e13) {
    return Error(fmt::format("{} {} is out of range; sizes go from 1 byte to 8T", option, text));
  }
  return bytes;
}

}  // namespace shardwise::cli
