// shardwise: decide how to split an LLM across GPUs, predict its cost, and run it to check.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>

#include "command.h"
#include "flags.h"
#include "parse_errors.h"

int main(int argc, char** argv) {
  using namespace shardwise;
  CLI::App app{
      "shardwise: split a large language model across GPUs, predict memory, time and money,\n"
      "and run the split for real to check the prediction.\n\n"
      "Every command runs on built-in defaults when given no options, and takes --json.\n"
      "Start with 'shardwise plan'; see also models, gpus, size, clusters, collectives, "
      "explain,\nroofline, simulate, price, recommend, run, train, report, compare, help.",
      "shardwise"};
  app.require_subcommand(0, 1);
  app.fallthrough(false);
  app.set_version_flag("--version", std::string("shardwise ") + cli::kVersion);
  Status result;
  cli::AddModelsCommand(app, result);
  cli::AddGpusCommand(app, result);
  cli::AddSizeCommand(app, result);
  cli::AddClustersCommand(app, result);
  cli::AddCollectivesCommand(app, result);
  cli::AddExplainCommand(app, result);
  cli::AddPlanCommand(app, result);
  cli::AddRooflineCommand(app, result);
  cli::AddSimulateCommand(app, result);
  cli::AddPriceCommand(app, result);
  cli::AddRunCommand(app, result);
  cli::AddTrainCommand(app, result);
  cli::AddReportCommand(app, result);
  cli::AddCompareCommand(app, result);
  cli::AddRecommendCommand(app, result);
  cli::AddHelpCommand(app, result);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "shardwise: error: %s\n",
                 cli::DescribeParseError(app, e, argc, argv).c_str());
    return 2;
  } catch (const std::exception& e) {  // a bug (or memory exhausted): still one line, no abort
    std::fprintf(stderr, "shardwise: internal error: %s\n", e.what());
    return 3;
  }
  if (app.get_subcommands().empty()) {
    std::cout << app.help();
    return 0;
  }
  if (!result.ok()) {
    std::fprintf(stderr, "shardwise: error: %s\n", cli::CliMessage(result).c_str());
    return result.code() == StatusCode::kUnavailable ? 3 : 2;
  }
  return 0;
}
