// `shardwise compare A B`: two results side by side. A and B are saved --json files or
// quoted command lines ("plan --cluster gb200-nvl72"), which are run with --json.
#include <fmt/format.h>

#include <cctype>
#include <cstdio>
#include <filesystem>
#include <string_view>

#include "command.h"
#include "shardwise/common/json_fields.h"
#include "shardwise/report/compare.h"
#include "shardwise/report/table.h"

namespace shardwise::cli {
namespace {

struct CompareOptions {
  std::string a, b;
  bool json = false;
};

// A result from a file, or from running this binary with `spec` and --json.
StatusOr<nlohmann::json> LoadResult(const std::string& spec, const char* side) {
  if (std::filesystem::is_regular_file(spec)) return ReadJsonFile(spec);
  if (spec.ends_with(".json")) return Error(fmt::format("{}: {}: no such file", side, spec));
  // The command line goes through a shell: allow only what shardwise's own options use, so
  // nothing in it can be a shell operator, quote or substitution.
  for (unsigned char c : spec) {
    if (!std::isalnum(c) &&
        std::string_view(" ._/=:,+@-").find(static_cast<char>(c)) == std::string_view::npos) {
      return Error(
          fmt::format("{}: '{}' is neither a result file nor a shardwise command line "
                      "(options and values only: letters, digits and ._/=:,+@-)",
                      side, spec));
    }
  }
  // The shell popen starts would resolve /proc/self/exe to itself: name this binary's file.
  std::error_code ec;
  const std::string self = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  if (ec || self.empty()) return Error(fmt::format("{}: cannot find the shardwise binary", side));
  const std::string cmd = "'" + self + "' " + spec + " --json";
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) return Error(fmt::format("{}: cannot run '{}'", side, spec));
  std::string out;
  char buffer[4096];
  for (size_t n; (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
  const int status = pclose(pipe);
  if (status != 0) {
    return Error(fmt::format("{}: 'shardwise {}' failed (its error is above)", side, spec));
  }
  return ParseJsonText(out, fmt::format("output of 'shardwise {}'", spec));
}

Status RunCompare(const CompareOptions& o) {
  SW_ASSIGN_OR_RETURN(nlohmann::json a, LoadResult(o.a, "A"));
  SW_ASSIGN_OR_RETURN(nlohmann::json b, LoadResult(o.b, "B"));
  SW_ASSIGN_OR_RETURN(report::Comparison c, report::CompareResults(a, b));
  auto rows = [](const std::vector<report::CompareRow>& rs) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& r : rs) {
      out.push_back({{"name", r.metric},
                     {"a", r.a},
                     {"b", r.b},
                     {"b_over_a", r.ratio ? nlohmann::json(*r.ratio) : nlohmann::json(nullptr)},
                     {"higher_is_better", r.higher_is_better}});
    }
    return out;
  };
  if (o.json) {
    PrintJson({{"command", "compare"},
               {"compared", c.command},
               {"a", o.a},
               {"b", o.b},
               {"inputs", rows(c.inputs)},
               {"metrics", rows(c.metrics)},
               {"reasons", c.reasons},
               {"verdict", c.verdict}});
    return Status();
  }
  std::cout << fmt::format("compare {} results\n  A: {}\n  B: {}\n\n", c.command, o.a, o.b);
  if (!c.inputs.empty()) {
    Table inputs({"differs", "A", "B"});
    inputs.SetLeftAligned({0, 1, 2});
    for (const auto& r : c.inputs) inputs.AddRow({r.metric, r.a, r.b});
    std::cout << inputs.Render() << "\n";
  }
  Table metrics({"metric", "A", "B", "B / A"});
  for (const auto& r : c.metrics) {
    metrics.AddRow({r.metric, r.a, r.b, r.ratio ? fmt::format("{:.2f}x", *r.ratio) : "-"});
  }
  std::cout << metrics.Render();
  if (!c.reasons.empty()) std::cout << "\nwhy:\n";
  for (const std::string& r : c.reasons) std::cout << "  " << r << "\n";
  if (!c.verdict.empty()) std::cout << "\n=> " << c.verdict << "\n";
  return Status();
}

}  // namespace

void AddCompareCommand(CLI::App& app, Status& result) {
  auto opts = std::make_shared<CompareOptions>();
  CLI::App* sub = app.add_subcommand(
      "compare",
      "Two setups side by side: the settings that differ, headline metrics with B / A, and\n"
      "why each performs as it does. A and B are saved --json results or quoted command lines.\n"
      "Example:\n"
      "  shardwise compare \"plan --model deepseek-v3 --cluster gb200-nvl72 --dtype fp8\" \\\n"
      "                    \"plan --model deepseek-v3 --cluster dgx-b200 --nodes 2 --dtype fp8\"");
  sub->add_option("a", opts->a, "The first setup: a saved --json result or a quoted command line")
      ->required();
  sub->add_option("b", opts->b, "The second setup: a saved --json result or a quoted command line")
      ->required();
  sub->add_flag("--json", opts->json, "Print JSON");
  BindCommand(sub, opts, result, RunCompare);
}

}  // namespace shardwise::cli
