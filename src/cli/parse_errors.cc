#include "parse_errors.h"

#include <fmt/format.h>

#include "shardwise/common/suggest.h"

namespace shardwise::cli {
namespace {

// The long option names of `app` as the user types them ("--model").
std::vector<std::string> OptionNames(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::Option* opt : app.get_options()) {
    for (const std::string& name : opt->get_lnames()) names.push_back("--" + name);
  }
  return names;
}

std::vector<std::string> CommandNames(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    names.push_back(sub->get_name());
  }
  return names;
}

std::string DidYouMean(const std::vector<std::string>& near) {
  if (near.empty()) return "";
  std::string out = "; did you mean ";
  for (size_t i = 0; i < near.size(); ++i) {
    if (i > 0) out += (i + 1 == near.size()) ? " or " : ", ";
    out += "'" + near[i] + "'";
  }
  return out + "?";
}

}  // namespace

std::string DescribeParseError(const CLI::App& app, const CLI::ParseError& error, int argc,
                               const char* const* argv) {
  const CLI::App* command = nullptr;
  for (const CLI::App* sub : app.get_subcommands()) command = sub;
  const std::string where = command ? "shardwise " + command->get_name() : "shardwise";
  const std::string see = fmt::format(" (see '{} --help')", where);
  if (dynamic_cast<const CLI::ExtrasError*>(&error) == nullptr)
    return fmt::format("{}{}", error.what(), see);

  // An extra argument is an unknown option of the command, or an unknown command.
  const std::vector<std::string> options = OptionNames(command ? *command : app);
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (command && arg == command->get_name()) continue;
    if (arg.starts_with("--")) {
      const std::string name = arg.substr(0, arg.find('='));
      if (std::find(options.begin(), options.end(), name) != options.end()) continue;
      return fmt::format("unknown option '{}' for '{}'{}{}", name, where,
                         DidYouMean(NearestNames(name, options)), see);
    }
    if (!command && !arg.starts_with("-")) {
      return fmt::format("unknown command '{}'{}{}", arg,
                         DidYouMean(NearestNames(arg, CommandNames(app))), see);
    }
  }
  return fmt::format("{}{}", error.what(), see);
}

}  // namespace shardwise::cli
