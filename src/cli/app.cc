// The shardwise command line: every subcommand registered on one CLI11 app, parsed and run.
#include "app.h"

#include <CLI/CLI.hpp>
#include <iostream>

#include "command.h"
#include "flags.h"
#include "parse_errors.h"

namespace shardwise::cli {

CommandLineOutcome RunCommandLine(int argc, const char* const* argv) {
  CLI::App app{
      "shardwise: split a large language model across GPUs, predict memory, time and money,\n"
      "and run the split for real to check the prediction.\n\n"
      "Every command runs on built-in defaults when given no options, and takes --json (but\n"
      "report and help).\n"
      "Start with 'shardwise plan'; see also models, gpus, size, clusters, collectives, "
      "explain,\nroofline, simulate, price, recommend, calibrate, run, train, report, compare, "
      "help.",
      "shardwise"};
  app.require_subcommand(0, 1);
  app.fallthrough(false);
  app.set_version_flag("--version", std::string("shardwise ") + kVersion);
  Status result;
  AddModelsCommand(app, result);
  AddGpusCommand(app, result);
  AddSizeCommand(app, result);
  AddClustersCommand(app, result);
  AddCollectivesCommand(app, result);
  AddExplainCommand(app, result);
  AddPlanCommand(app, result);
  AddRooflineCommand(app, result);
  AddSimulateCommand(app, result);
  AddPriceCommand(app, result);
  AddRunCommand(app, result);
  AddTrainCommand(app, result);
  AddReportCommand(app, result);
  AddCompareCommand(app, result);
  AddRecommendCommand(app, result);
  AddCalibrateCommand(app, result);
  AddHelpCommand(app, result);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    // `shardwise nosuch --help`: the help flag is seen before the unknown command is.
    const auto named = [&](const CLI::App* sub) { return sub->check_name(argv[1]); };
    if (argc > 1 && argv[1][0] != '-' && app.get_subcommands(named).empty()) {
      return {2, DescribeParseError(app, CLI::ExtrasError({argv[1]}), argc, argv), false};
    }
    return {app.exit(e), "", false};
  } catch (const CLI::CallForAllHelp& e) {
    return {app.exit(e), "", false};
  } catch (const CLI::CallForVersion& e) {
    return {app.exit(e), "", false};
  } catch (const CLI::ParseError& e) {
    return {2, DescribeParseError(app, e, argc, argv), false};
  } catch (const std::exception& e) {  // a bug (or memory exhausted): still one line, no abort
    return {3, e.what(), true};
  }
  if (app.get_subcommands().empty()) {
    std::cout << app.help();
    return {};
  }
  if (!result.ok()) {
    return {result.code() == StatusCode::kUnavailable ? 3 : 2, CliMessage(result), false};
  }
  return {};
}

}  // namespace shardwise::cli
