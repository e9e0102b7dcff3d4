#include "parse_errors.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

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

// The options a mistyped `name` most likely meant: the one a word in it names where no option
// spelt like it has the word ("--price" means the GPU price, not "--profile"), then the nearest
// by spelling.
std::vector<std::string> Suggestions(const std::string& name,
                                     const std::vector<std::string>& options) {
  std::vector<std::string> near = NearestNames(name, options);
  static const std::vector<std::pair<const char*, const char*>> kWords = {
      {"price", "--usd-per-gpu-hour"},
      {"cost", "--usd-per-gpu-hour"},
      {"usd", "--usd-per-gpu-hour"}};
  for (const auto& entry : kWords) {
    const std::string word = entry.first, option = entry.second;  // captured below
    const bool offered = std::find(options.begin(), options.end(), option) != options.end();
    // Only where no option spelt like it has the word ("--api-usd-per-mtok-ouput" means its
    // near namesake, not the GPU price).
    const bool spelt = std::any_of(near.begin(), near.end(), [&](const std::string& n) {
      return n.find(word) != std::string::npos;
    });
    if (name.find(word) != std::string::npos && offered && !spelt)
      near.insert(near.begin(), option);
  }
  return near;
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
  const std::string what = error.what();
  // CLI11's words for a value of the wrong type and for a flag given twice, as one line a user
  // can act on ("Could not convert: --nodes = 2.5", "--model: At Most 1 required but received
  // 2").
  if (dynamic_cast<const CLI::ConversionError*>(&error) != nullptr) {
    const std::string prefix = "Could not convert: ";
    const size_t eq = what.find(" = ");
    if (what.starts_with(prefix) && eq != std::string::npos) {
      const std::string name = what.substr(prefix.size(), eq - prefix.size());
      const CLI::Option* option = (command ? command : &app)->get_option_no_throw(name);
      const std::string type = option ? option->get_type_name() : "";
      const char* expected = type.starts_with("INT")     ? "a whole number"
                             : type.starts_with("FLOAT") ? "a number"
                                                         : "a value of its kind";
      return fmt::format("{} '{}' is not {}{}", name, what.substr(eq + 3), expected, see);
    }
  }
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&error) != nullptr &&
      what.find("At Most 1 required but received") != std::string::npos) {
    return fmt::format("{} is given more than once; give it once{}", what.substr(0, what.find(':')),
                       see);
  }
  // A value a check refused, worded as a conversion's ("--nodes '0x1' is not ..."): CLI11 puts a
  // colon after the name.
  if (dynamic_cast<const CLI::ValidationError*>(&error) != nullptr && what.starts_with("--")) {
    const size_t colon = what.find(": '");
    if (colon != std::string::npos && colon < what.find(' ')) {
      return fmt::format("{} {}{}", what.substr(0, colon), what.substr(colon + 2), see);
    }
  }
  // A missing positional argument: name what it is ("b is required" said neither).
  if (dynamic_cast<const CLI::RequiredError*>(&error) != nullptr &&
      what.ends_with(" is required")) {
    const std::string name = what.substr(0, what.size() - std::string(" is required").size());
    const CLI::Option* option = (command ? command : &app)->get_option_no_throw(name);
    if (option != nullptr && option->get_positional()) {
      std::string what_it_is = option->get_description();
      if (!what_it_is.empty()) {
        what_it_is[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(what_it_is[0])));
      }
      return fmt::format("{} needs its argument {} ({}){}", where, name, what_it_is, see);
    }
  }
  if (dynamic_cast<const CLI::ExtrasError*>(&error) == nullptr)
    return fmt::format("{}{}", what, see);

  // An extra argument is an unknown option of the command, or an unknown command.
  const std::vector<std::string> options = OptionNames(command ? *command : app);
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (command && arg == command->get_name()) continue;
    if (arg.starts_with("--")) {
      const std::string name = arg.substr(0, arg.find('='));
      if (std::find(options.begin(), options.end(), name) != options.end()) continue;
      return fmt::format("unknown option '{}' for '{}'{}{}", name, where,
                         DidYouMean(Suggestions(name, options)), see);
    }
    // A long option with one dash ("-usd-per-gpu-hour"): CLI11 reads it as stray arguments.
    if (arg.size() > 2 && arg[0] == '-' && std::isalpha(static_cast<unsigned char>(arg[1]))) {
      const std::string name = "-" + arg.substr(0, arg.find('='));
      if (std::find(options.begin(), options.end(), name) != options.end()) {
        return fmt::format("'{}' has one dash; long options take two: '{}'{}", arg, name, see);
      }
    }
    if (!command && !arg.starts_with("-")) {
      return fmt::format("unknown command '{}'{}{}", arg,
                         DidYouMean(NearestNames(arg, CommandNames(app))), see);
    }
  }
  return fmt::format("{}{}", error.what(), see);
}

}  // namespace shardwise::cli
