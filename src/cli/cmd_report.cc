// `shardwise report RESULT.json`: draw a saved --json result as the HTML page.
#include <fmt/format.h>

#include <filesystem>

#include "command.h"
#include "html_output.h"
#include "shardwise/common/json_fields.h"
#include "shardwise/report/html_page.h"

namespace shardwise::cli {
namespace {

struct ReportOptions {
  std::string result;
  HtmlOptions html;
};

Status RunReport(const ReportOptions& o) {
  SW_ASSIGN_OR_RETURN(nlohmann::json result, ReadJsonFile(o.result));
  SW_ASSIGN_OR_RETURN(std::string page, report::RenderHtmlPage(result));
  std::string path = o.html.path;
  if (path.empty()) path = std::filesystem::path(o.result).replace_extension(".html").string();
  SW_RETURN_IF_ERROR(WritePage(path, page, o.html.force));
  std::cout << fmt::format("report: wrote {} ({} bytes of HTML)\n", path, page.size());
  return Status();
}

}  // namespace

void AddReportCommand(CLI::App& app, Status& result) {
  auto opts = std::make_shared<ReportOptions>();
  CLI::App* sub = app.add_subcommand(
      "report",
      "Draw a saved result (plan, recommend, explain, simulate, price or train --json) as one\n"
      "self-contained HTML page with plots. Example:\n"
      "  shardwise plan --nodes 2 --json > plan.json && shardwise report plan.json --html "
      "plan.html");
  sub->add_option("result", opts->result, "A JSON file written by a command's --json")->required();
  opts->html.AddTo(sub);
  sub->get_option("--html")->description("Page to write (default: RESULT with .html)");
  BindCommand(sub, opts, result, RunReport);
}

}  // namespace shardwise::cli
