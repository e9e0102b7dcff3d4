// `shardwise compare A B`: two results side by side. A and B are saved --json files or
// quoted command lines ("plan --cluster gb200-nvl72"), which are run with --json.
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string_view>

#include "command.h"
#include "shardwise/common/input_policy.h"
#include "shardwise/common/json_fields.h"
#include "shardwise/common/shell_words.h"
#include "shardwise/report/compare.h"
#include "shardwise/text/text.h"

namespace shardwise::cli {
namespace {

struct CompareOptions {
  std::string a, b;
  bool json = false;
};

// A result from a file, or from running this binary with `spec`'s words and --json. Each word
// reaches the shell popen starts in single quotes, so none can be an operator or substitution;
// the run's own error, on a failure, is folded into this one's line.
StatusOr<nlohmann::json> LoadResult(const std::string& spec, const char* side) {
  if (std::filesystem::is_regular_file(spec)) return ReadJsonFile(spec);
  if (spec.ends_with(".json")) return Error(fmt::format("{}: {}: no such file", side, spec));
  StatusOr<std::vector<std::string>> words = SplitShellWords(spec);
  if (!words.ok()) {
    return Error(fmt::format("{}: '{}' is neither a result file nor a shardwise command line: {}",
                             side, Printable(spec), words.status().message()));
  }
  if (words->empty()) {
    return Error(
        fmt::format("{} is empty; give a result file or a command line such as "
                    "\"plan --model llama-3.1-8b\"",
                    side));
  }
  // The shell popen starts would resolve /proc/self/exe to itself: name this binary's file.
  std::error_code ec;
  const std::string self = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  if (ec || self.empty()) return Error(fmt::format("{}: cannot find the shardwise binary", side));
  const std::filesystem::path tmp = std::filesystem::temp_directory_path(ec);
  std::string errors = (ec ? std::filesystem::path("/tmp") : tmp) / "shardwise_compare_XXXXXX";
  const int fd = mkstemp(errors.data());
  if (fd < 0) {
    return Error(
        fmt::format("{}: cannot make a temporary file for its messages in {}; set "
                    "TMPDIR to a writable directory",
                    side, tmp.string()));
  }
  close(fd);
  std::string cmd = ShellQuote(self);
  for (const std::string& word : *words) cmd += " " + ShellQuote(word);
  cmd += " --json 2>" + ShellQuote(errors);
  FILE* pipe = popen(cmd.c_str(), "r");
  std::string out;
  char buffer[4096];
  for (size_t n; pipe && (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
  const int status = pipe ? pclose(pipe) : -1;
  std::vector<std::string> messages;
  std::ifstream in(errors);
  for (std::string line; std::getline(in, line);) messages.push_back(line);
  std::remove(errors.c_str());
  if (!pipe) return Error(fmt::format("{}: cannot start a shell to run '{}'", side, spec));
  if (status != 0) {
    // The run's error is its last line.
    std::string error = messages.empty() ? "it printed no error" : messages.back();
    constexpr std::string_view kPrefix = "shardwise: error: ";
    if (error.starts_with(kPrefix)) error = error.substr(kPrefix.size());
    return Error(fmt::format("{}: 'shardwise {}' failed: {}", side, spec, error));
  }
  // Its notes and warnings, marked with its side.
  for (const std::string& line : messages) std::fprintf(stderr, "%s: %s\n", side, line.c_str());
  return ParseJsonText(out, fmt::format("output of 'shardwise {}'", spec));
}

Status RunCompare(const CompareOptions& o) {
  SW_ASSIGN_OR_RETURN(nlohmann::json a, LoadResult(o.a, "A"));
  SW_ASSIGN_OR_RETURN(nlohmann::json b, LoadResult(o.b, "B"));
  SW_ASSIGN_OR_RETURN(report::Comparison c, report::CompareResults(a, b));
  if (o.json) {
    PrintJson(report::ComparisonJson(c, o.a, o.b));
    return Status();
  }
  std::cout << text::CompareText(c, o.a, o.b);
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
