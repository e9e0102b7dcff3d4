#include "shardwise/report/table.h"

#include <fmt/format.h>

#include <algorithm>

namespace shardwise {
namespace {

// Display width in code points (cells may hold UTF-8 such as "µs" or "×").
size_t DisplayWidth(const std::string& s) {
  return std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; });
}

}  // namespace

std::string Table::Render() const {
  std::vector<size_t> widths(headers_.size(), 0);
  auto widen = [&](const std::vector<std::string>& cells) {
    for (size_t i = 0; i < cells.size() && i < widths.size(); ++i) {
      widths[i] = std::max(widths[i], DisplayWidth(cells[i]));
    }
  };
  widen(headers_);
  for (const auto& row : rows_) widen(row);

  auto line = [&](const std::vector<std::string>& cells) {
    std::string out;
    for (size_t i = 0; i < widths.size(); ++i) {
      const std::string cell = i < cells.size() ? cells[i] : "";
      const std::string pad(widths[i] - DisplayWidth(cell), ' ');
      const bool left = std::find(left_.begin(), left_.end(), i) != left_.end();
      if (i > 0) out += "  ";
      out += left ? cell + pad : pad + cell;
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };
  std::string out = line(headers_);
  size_t total = 0;
  for (size_t w : widths) total += w;
  out += std::string(total + 2 * (widths.size() - 1), '-') + "\n";
  for (const auto& row : rows_) out += line(row);
  return out;
}

}  // namespace shardwise
