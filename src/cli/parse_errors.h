// Turns a CLI11 parse error into the one line the user sees: for an unknown option or command,
// the nearest known names ("did you mean '--model'?") and where to read more.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace shardwise::cli {

// One line (no trailing newline) describing `error` for the command line `argv`.
std::string DescribeParseError(const CLI::App& app, const CLI::ParseError& error, int argc,
                               const char* const* argv);

// The version string `shardwise --version` prints.
inline constexpr const char* kVersion = "0.3.0";

}  // namespace shardwise::cli
