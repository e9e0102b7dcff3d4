#include "html_output.h"

#include <fmt/format.h>

#include <cstdio>
#include <fstream>

#include "output_guard.h"
#include "shardwise/report/html_page.h"

namespace shardwise::cli {
namespace {

Status CheckPagePath(const std::string& path, bool force) {
  return CheckOutputPath(path, force, "page written by shardwise", [](const std::string& content) {
    return content.find(report::kGeneratorMeta) != std::string::npos;
  });
}

}  // namespace

void HtmlOptions::AddTo(CLI::App* sub, bool emits) {
  sub->add_option("--html", path,
                  "Also write the result as a self-contained HTML page with plots (no network, "
                  "no JavaScript needed)");
  sub->add_flag("--force", force,
                emits ? "Let --html and --emit-dir replace files that shardwise did not write"
                      : "Let --html replace a file that shardwise did not write");
}

Status HtmlOptions::Write(const nlohmann::json& result) const {
  if (path.empty()) return Status();
  SW_ASSIGN_OR_RETURN(std::string html, report::RenderHtmlPage(result));
  SW_RETURN_IF_ERROR(WritePage(path, html, force));
  // On stderr, so --json's stdout stays one document.
  std::fprintf(stderr, "shardwise: wrote %s\n", path.c_str());
  return Status();
}

Status HtmlOptions::Check() const { return path.empty() ? Status() : CheckPagePath(path, force); }

Status WritePage(const std::string& path, const std::string& html, bool force) {
  SW_RETURN_IF_ERROR(CheckPagePath(path, force));
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << html;
  out.close();
  if (!out)
    return Error(fmt::format("--html {}: cannot write the file (check the directory)", path));
  return Status();
}

}  // namespace shardwise::cli
