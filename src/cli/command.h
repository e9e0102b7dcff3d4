// How CLI subcommands plug into main: each Add*Command creates its CLI11 subcommand, owns its
// options, and on invocation stores the command's Status in `result` (main turns an error into
// one line on stderr and exit code 2).
#pragma once

#include <iostream>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "shardwise/common/status.h"

namespace shardwise::cli {

void AddModelsCommand(CLI::App& app, Status& result);
void AddGpusCommand(CLI::App& app, Status& result);
void AddSizeCommand(CLI::App& app, Status& result);
void AddClustersCommand(CLI::App& app, Status& result);
void AddCollectivesCommand(CLI::App& app, Status& result);
void AddExplainCommand(CLI::App& app, Status& result);
void AddPlanCommand(CLI::App& app, Status& result);
void AddRooflineCommand(CLI::App& app, Status& result);
void AddSimulateCommand(CLI::App& app, Status& result);
void AddPriceCommand(CLI::App& app, Status& result);
void AddRunCommand(CLI::App& app, Status& result);
void AddTrainCommand(CLI::App& app, Status& result);

// Writes JSON to stdout, pretty-printed.
inline void PrintJson(const nlohmann::json& json) { std::cout << json.dump(2) << "\n"; }

// Binds a command body to a subcommand: `body(opts)` runs when the subcommand is given.
template <typename Options, typename Body>
void BindCommand(CLI::App* sub, std::shared_ptr<Options> opts, Status& result, Body body) {
  sub->callback([opts, &result, body]() { result = body(*opts); });
}

}  // namespace shardwise::cli
