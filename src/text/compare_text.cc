// `shardwise compare` as text: the settings that differ, the headline metrics with B / A, each
// side's reasons and the verdict (text/text.h).
#include <fmt/format.h>

#include "shardwise/report/table.h"
#include "shardwise/text/text.h"

namespace shardwise::text {

std::string CompareText(const report::Comparison& c, const std::string& a, const std::string& b) {
  std::string out = fmt::format("compare {} results\n  A: {}\n  B: {}\n\n", c.command, a, b);
  if (!c.inputs.empty()) {
    Table inputs({"differs", "A", "B"});
    inputs.SetLeftAligned({0, 1, 2});
    for (const report::CompareRow& r : c.inputs) inputs.AddRow({r.metric, r.a, r.b});
    out += inputs.Render() + "\n";
  }
  Table metrics({"metric", "A", "B", "B / A"});
  for (const report::CompareRow& r : c.metrics) {
    metrics.AddRow({r.label.empty() ? r.metric : r.label, r.a, r.b,
                    r.ratio ? fmt::format("{:.2f}x", *r.ratio) : "-"});
  }
  out += metrics.Render();
  if (!c.reasons.empty()) out += "\nwhy:\n";
  for (const std::string& r : c.reasons) out += "  " + r + "\n";
  if (!c.verdict.empty()) out += "\n=> " + c.verdict + "\n";
  return out;
}

}  // namespace shardwise::text
