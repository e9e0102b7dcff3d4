// --html FILE and --force, shared by the commands that draw the HTML report.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "shardwise/common/status.h"

namespace shardwise::cli {

struct HtmlOptions {
  std::string path;  // empty: no page
  bool force = false;

  // `emits`: the command also writes --emit-dir's files, which --force lets replace too.
  void AddTo(CLI::App* sub, bool emits = false);
  // Refuses, before any work, a path that Write() would refuse.
  Status Check() const;
  // Renders `result` into `path`. Refuses to replace a file that is not a shardwise page
  // unless --force.
  Status Write(const nlohmann::json& result) const;
};

// Writes `html` to `path`, refusing to overwrite a file that is not a shardwise page.
Status WritePage(const std::string& path, const std::string& html, bool force);

}  // namespace shardwise::cli
