// CLI11 validators for options whose bad values the conversion alone lets through: 0, NaN and
// infinity for quantities that must be positive (an SLO, a duration), a minus sign on an
// unsigned value (which would wrap to 2^64 - 1), a whole number CLI11 would read in another base,
// and blank text (which would read as not given: every option refuses both, command.h; a layout
// names what to give).
#pragma once

#include <CLI/CLI.hpp>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <string>

#include "shardwise/common/decimal.h"

namespace shardwise::cli {

// A finite number greater than zero.
inline const CLI::Validator kPositiveFinite(
    [](std::string& text) -> std::string {
      char* end = nullptr;
      const double v = std::strtod(text.c_str(), &end);
      if (text.empty() || *end != '\0' || !std::isfinite(v) || v <= 0) {
        return "must be a positive finite number, got '" + text + "'";
      }
      return "";
    },
    "POSITIVE");

// A whole number from 0 to 2^64 - 1, written without a sign.
inline const CLI::Validator kUnsignedInteger(
    [](std::string& text) -> std::string {
      // Digits only, and no more than 2^64 - 1 (CLI11 would clamp a larger one silently).
      const std::string kMax = "18446744073709551615";
      const size_t first = text.find_first_not_of('0');
      const std::string digits = first == std::string::npos ? "0" : text.substr(first);
      if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos ||
          digits.size() > kMax.size() || (digits.size() == kMax.size() && digits > kMax)) {
        return "must be a whole number from 0 to " + kMax + ", got '" + text + "'";
      }
      return "";
    },
    "UINT");

// A whole number is read in decimal digits (a minus sign allowed): CLI11 would read "010" as
// octal 8, "0x10" as 16 and " 1" as 1. Leading zeros are dropped, so "010" reads as 10; text
// that is no number at all is left for the conversion to refuse in its own words.
inline const CLI::Validator kDecimalInteger(
    [](std::string& text) -> std::string {
      const size_t sign = text.starts_with('-') ? 1 : 0;
      const std::string rest = text.substr(sign);
      if (!rest.empty() && rest.find_first_not_of("0123456789") == std::string::npos) {
        const size_t first = rest.find_first_not_of('0');
        text = first == std::string::npos ? "0" : text.substr(0, sign) + rest.substr(first);
        return "";
      }
      const bool other_base =
          rest.size() > 1 && rest[0] == '0' && std::isalpha(static_cast<unsigned char>(rest[1]));
      const bool padded =
          !text.empty() && text.find_first_not_of(" \t") != std::string::npos &&
          (std::isspace(static_cast<unsigned char>(text.front())) || text.front() == '+');
      if (other_base || padded) return "'" + text + "' is not a whole number in decimal digits";
      return "";
    },
    "");

// A signed whole number CLI11 can hold: it would clamp a larger one to 2^63 - 1 silently. Runs
// after kDecimalInteger, so on digits without leading zeros.
inline const CLI::Validator kInt64Range(
    [](std::string& text) -> std::string {
      const std::string kMax = "9223372036854775807";
      const std::string digits = text.substr(text.starts_with('-') ? 1 : 0);
      if (digits.find_first_not_of("0123456789") != std::string::npos) return "";
      if (digits.size() > kMax.size() || (digits.size() == kMax.size() && digits > kMax)) {
        return "'" + text + "' is too large (a whole number up to " + kMax + ")";
      }
      return "";
    },
    "");

// A number is read in decimal (common/decimal.h): CLI11 would read "0x10" as 16 and " 2" as 2;
// other text that is no number is left for the conversion (or the option's own check of inf and
// nan) to refuse in its own words.
inline const CLI::Validator kDecimalFloat(
    [](std::string& text) -> std::string {
      const bool hex = text.find_first_of("xX") != std::string::npos;
      const bool padded = !text.empty() && text.find_first_not_of(" \t") != std::string::npos &&
                          std::isspace(static_cast<unsigned char>(text.front()));
      if ((hex || padded) && !ParseDecimal(text)) {
        return "'" + text + "' is not a number in decimal digits";
      }
      return "";
    },
    "");

// Text that must not be blank, which would read as not given; `fix` says what to give instead.
inline CLI::Validator NonBlank(const std::string& fix, const std::string& name) {
  return CLI::Validator(
      [fix](std::string& text) -> std::string {
        return text.find_first_not_of(" \t") == std::string::npos ? "is empty; " + fix : "";
      },
      name);
}

// A layout given on the command line.
inline const CLI::Validator kLayoutText = NonBlank("give a layout such as tp8 or dp8ep8", "LAYOUT");

}  // namespace shardwise::cli
