#include "shardwise/common/python_json.h"

#include <array>
#include <string_view>

namespace shardwise {

std::string QuoteNonFiniteLiterals(const std::string& text) {
  static constexpr std::array<std::string_view, 3> kLiterals = {"-Infinity", "Infinity", "NaN"};
  std::string out;
  out.reserve(text.size());
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (in_string) {
      out += ch;
      if (ch == '\\' && i + 1 < text.size()) {
        out += text[++i];
      } else if (ch == '"') {
        in_string = false;
      }
      continue;
    }
    if (ch == '"') {
      in_string = true;
      out += ch;
      continue;
    }
    bool replaced = false;
    for (std::string_view literal : kLiterals) {
      if (std::string_view(text).substr(i, literal.size()) == literal) {
        out += '"';
        out += literal;
        out += '"';
        i += literal.size() - 1;
        replaced = true;
        break;
      }
    }
    if (!replaced) out += ch;
  }
  return out;
}

}  // namespace shardwise
