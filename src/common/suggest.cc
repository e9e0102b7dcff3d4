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
  struct Scored {
    int score;     // edit distance, 1 at most when one name contains the other
    int distance;  // plain edit distance, to order ties ("h200x": h200 before h20)
    std::string name;
  };
  std::vector<Scored> scored;
  for (const std::string& c : candidates) {
    const int distance = EditDistance(name, c);
    int d = distance;
    // A candidate that contains the name (or the reverse) is a strong hint even when long.
    if (c.find(name) != std::string::npos || name.find(c) != std::string::npos) d = std::min(d, 1);
    const int limit = std::max<int>(2, static_cast<int>(std::max(name.size(), c.size())) / 2);
    if (d <= limit) scored.push_back({d, distance, c});
  }
  std::stable_sort(scored.begin(), scored.end(), [](const Scored& x, const Scored& y) {
    return std::pair(x.score, x.distance) < std::pair(y.score, y.distance);
  });
  std::vector<std::string> out;
  for (const auto& [d, distance, c] : scored) {
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
