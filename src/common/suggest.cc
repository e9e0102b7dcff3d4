#include "shardwise/common/suggest.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "shardwise/common/input_policy.h"

namespace shardwise {

int EditDistance(std::string_view a, std::string_view b) {
  std::vector<int> row(b.size() + 1);
  std::iota(row.begin(), row.end(), 0);
  for (size_t i = 1; i <= a.size(); ++i) {
    int diagonal = row[0];
    row[0] = static_cast<int>(i);
    for (size_t j = 1; j <= b.size(); ++j) {
      const int substitute = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      diagonal = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, substitute});
    }
  }
  return row[b.size()];
}

std::vector<std::string> NearestNames(std::string_view name,
                                      const std::vector<std::string>& candidates, int max_count) {
  std::vector<std::pair<int, std::string>> scored;
  for (const std::string& c : candidates) {
    int d = EditDistance(name, c);
    // A candidate that contains the name (or the reverse) is a strong hint even when long.
    if (c.find(name) != std::string::npos || name.find(c) != std::string::npos) d = std::min(d, 1);
    const int limit = std::max<int>(2, static_cast<int>(std::max(name.size(), c.size())) / 2);
    if (d <= limit) scored.emplace_back(d, c);
  }
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<std::string> out;
  for (const auto& [d, c] : scored) {
    if (static_cast<int>(out.size()) == max_count) break;
    out.push_back(c);
  }
  return out;
}

std::string UnknownNameMessage(std::string_view what, std::string_view name,
                               const std::vector<std::string>& candidates, std::string_view hint) {
  std::string msg = fmt::format("unknown {} '{}'", what, Printable(name));
  const std::vector<std::string> near = NearestNames(name, candidates);
  if (!near.empty()) {
    msg += "; did you mean ";
    for (size_t i = 0; i < near.size(); ++i) {
      if (i > 0) msg += (i + 1 == near.size()) ? " or " : ", ";
      msg += "'" + near[i] + "'";
    }
    msg += "?";
  }
  if (!hint.empty()) msg += fmt::format(" ({})", hint);
  return msg;
}

}  // namespace shardwise
