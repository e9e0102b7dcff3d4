// A plain text table: headers, rows of cells, right-aligned numeric columns. Used by every
// command's human-readable output. Value type.
#pragma once

#include <string>
#include <vector>

namespace shardwise {

class Table {
 public:
  explicit Table(std::vector<std::string> headers) : headers_(std::move(headers)) {}
  void AddRow(std::vector<std::string> cells) { rows_.push_back(std::move(cells)); }
  // Columns whose index is listed are left-aligned (text); the rest right-aligned (numbers).
  void SetLeftAligned(std::vector<size_t> columns) { left_ = std::move(columns); }
  std::string Render() const;

 private:
  std::vector<std::string> headers_;
  std::vector<std::vector<std::string>> rows_;
  std::vector<size_t> left_ = {0};
};

}  // namespace shardwise
