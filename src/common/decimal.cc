#include "shardwise/common/decimal.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>

namespace shardwise {
namespace {

// Digits from `i`, returning how many.
size_t Digits(std::string_view text, size_t& i) {
  const size_t start = i;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
  return i - start;
}

}  // namespace

std::optional<double> ParseDecimal(std::string_view text) {
  size_t i = 0;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
  size_t digits = Digits(text, i);
  if (i < text.size() && text[i] == '.') {
    ++i;
    digits += Digits(text, i);
  }
  if (digits == 0) return std::nullopt;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
    if (Digits(text, i) == 0) return std::nullopt;
  }
  if (i != text.size()) return std::nullopt;
  const std::string copy(text);
  errno = 0;
  const double value = std::strtod(copy.c_str(), nullptr);
  if (errno == ERANGE || !std::isfinite(value)) return std::nullopt;  // beyond double, either end
  return value;
}

}  // namespace shardwise
