#include "shardwise/common/shell_words.h"

#include <fmt/format.h>

namespace shardwise {

StatusOr<std::vector<std::string>> SplitShellWords(std::string_view line) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == ' ' || c == '\t') {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
      continue;
    }
    if (c == '\\' || static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      return Error(fmt::format(
          "character {} at position {} (a backslash, newline or control "
          "character) is not taken in a command line; quote the value "
          "with '...' instead",
          c == '\\' ? std::string("'\\'") : fmt::format("{:#04x}", static_cast<unsigned char>(c)),
          i + 1));
    }
    in_word = true;
    if (c != '\'' && c != '"') {
      word += c;
      continue;
    }
    const size_t close = line.find(c, i + 1);
    if (close == std::string_view::npos) {
      return Error(fmt::format("the quote {} at position {} is never closed", c, i + 1));
    }
    word += line.substr(i + 1, close - i - 1);
    i = close;
  }
  if (in_word) words.push_back(std::move(word));
  return words;
}

std::string ShellQuote(std::string_view word) {
  std::string out = "'";
  for (const char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace shardwise
