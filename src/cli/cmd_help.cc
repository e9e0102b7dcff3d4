// `shardwise help [COMMAND]`: the same text as `shardwise [COMMAND] --help`.
#include <fmt/format.h>

#include "command.h"
#include "shardwise/common/suggest.h"

namespace shardwise::cli {

void AddHelpCommand(CLI::App& app, Status& result) {
  auto topic = std::make_shared<std::string>();
  CLI::App* sub = app.add_subcommand(
      "help", "Print the help of shardwise or of one command. Example: shardwise help plan");
  sub->add_option("command", *topic, "Command to explain");
  sub->callback([&app, topic, &result]() {
    if (topic->empty()) {
      // App::help() would describe the selected subcommand (this one); format the top level.
      std::cout << app.get_formatter()->make_help(&app, app.get_name(), CLI::AppFormatMode::Normal);
      return;
    }
    std::vector<std::string> names;
    for (CLI::App* c : app.get_subcommands([](CLI::App*) { return true; })) {
      if (c->get_name() == *topic) {
        std::cout << c->help(app.get_name());
        return;
      }
      names.push_back(c->get_name());
    }
    result = Error(UnknownNameMessage("command", *topic, names, "see 'shardwise help'"));
  });
}

}  // namespace shardwise::cli
