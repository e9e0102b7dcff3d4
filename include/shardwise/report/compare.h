// Side-by-side comparison of two results of the same command (plan, explain, simulate, price
// or recommend, as --json prints them): the inputs that differ, the headline metrics of each with
// their ratio, and each side's own explanation of what bounds it. Pure; thread-safe.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "shardwise/common/status.h"

namespace shardwise::report {

struct CompareRow {
  std::string metric;           // with its unit, e.g. "TPOT (s)"
  std::string a, b;             // as printed
  std::optional<double> ratio;  // b / a for numbers
  bool higher_is_better = true;
  bool breaks_ties = true;          // may decide when the first metric is level
  nlohmann::json a_value, b_value;  // as the results hold them (numbers as numbers)
  std::string label;  // for text, where `a` and `b` print their unit: `metric` without it
};

struct Comparison {
  std::string command;
  std::vector<CompareRow> inputs;    // the settings that differ (model, cluster, layout, ...)
  std::vector<CompareRow> metrics;   // headline numbers
  std::vector<std::string> reasons;  // why each side performs as it does, in its own words
  std::string verdict;  // one line: which is better on the headline metric, by how much
};

StatusOr<Comparison> CompareResults(const nlohmann::json& a, const nlohmann::json& b);

// compare's --json (docs/json.md): the command compared, A and B as given, the inputs and
// metrics with their values as the results hold them, the reasons and the verdict.
nlohmann::json ComparisonJson(const Comparison& c, const std::string& a, const std::string& b);

}  // namespace shardwise::report
