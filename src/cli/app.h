// The whole command line as one function: the `shardwise` binary's main and the Python package
// (python/shardwise) both run commands through it, so a keyword argument and a flag are parsed,
// checked and answered by the same code.
#pragma once

#include <string>

namespace shardwise::cli {

struct CommandLineOutcome {
  int exit_code = 0;      // 0 ok, 2 bad input, 3 unavailable or an internal error
  std::string error;      // one line naming what is wrong and how to fix it; empty when ok
  bool internal = false;  // the error is a bug (an exception), not the input
};

// Parses `argv` (argv[0] is the program's name), runs the command it names and writes the
// command's output (text, JSON or help) to std::cout; notes and progress go to stderr.
CommandLineOutcome RunCommandLine(int argc, const char* const* argv);

}  // namespace shardwise::cli
