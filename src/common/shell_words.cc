#include "shardwise/common/shell_words.h"

#include <fmt/format.h>

namespace shardwise {

namespace {

// A backslash, newline or other control character, which a command line cannot take literally.
Status Refused(char c, size_t at) {
  return Error(fmt::format(
      "character {} at position {} (a backslash, newline or control "
      "character) is not taken in a command line; quote the value with "
      "'...' instead",
      c == '\\' ? std::string("'\\'") : fmt::format("{:#04x}", static_cast<unsigned char>(c)),
      at + 1));
}

bool Literal(char c) { return c != '\\' && static_cast<unsigned char>(c) >= 0x20 && c != 0x7f; }

}  // namespace

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
    if (!Literal(c)) return Refused(c, i);
    in_word = true;
    if (c != '\'' && c != '"') {
      word += c;
      continue;
    }
    const size_t close = line.find(c, i + 1);
    if (close == std::string_view::npos) {
      return Error(fmt::format("the quote {} at position {} is never closed", c, i + 1));
    }
    for (size_t k = i + 1; k < close; ++k) {
      if (!Literal(line[k])) return Refused(line[k], k);
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
