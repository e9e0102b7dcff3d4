// shardwise._shardwise: the Python package's extension module. It runs one shardwise command
// line in this process and hands back what the command wrote; python/shardwise/__init__.py
// turns keyword arguments into that command line and the --json answer into a dict.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "../cli/app.h"
#include "../cli/parse_errors.h"

namespace py = pybind11;

namespace {

// Sends std::cout, where every command writes its answer, to `buffer` while it lives.
class RedirectStdout {
 public:
  explicit RedirectStdout(std::ostringstream& buffer) : saved_(std::cout.rdbuf(buffer.rdbuf())) {}
  ~RedirectStdout() { std::cout.rdbuf(saved_); }
  RedirectStdout(const RedirectStdout&) = delete;
  RedirectStdout& operator=(const RedirectStdout&) = delete;

 private:
  std::streambuf* saved_;
};

// Runs `shardwise ARGS...`: returns (exit code, what it wrote to stdout, the one-line error or
// "", whether the error is internal). The GIL stays held: std::cout is the process's, so two
// commands at once would interleave their answers.
py::tuple RunCommandLine(const std::vector<std::string>& args) {
  std::vector<const char*> argv = {"shardwise"};
  for (const std::string& arg : args) argv.push_back(arg.c_str());
  std::ostringstream out;
  shardwise::cli::CommandLineOutcome outcome;
  {
    RedirectStdout redirect(out);
    outcome = shardwise::cli::RunCommandLine(static_cast<int>(argv.size()), argv.data());
  }
  return py::make_tuple(outcome.exit_code, out.str(), outcome.error, outcome.internal);
}

}  // namespace

PYBIND11_MODULE(_shardwise, m) {
  m.doc() = "shardwise's command layer, in process (use the functions of the shardwise package)";
  m.def("run_command_line", &RunCommandLine, py::arg("args"),
        "Runs `shardwise ARGS...`; returns (exit_code, stdout, error, internal).");
  m.attr("__version__") = shardwise::cli::kVersion;
}
