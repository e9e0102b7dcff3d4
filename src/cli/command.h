// How CLI subcommands plug into main: each Add*Command creates its CLI11 subcommand, owns its
// options, and on invocation stores the command's Status in `result` (main turns an error into
// one line on stderr and exit code 2).
#pragma once

#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "flags.h"
#include "shardwise/common/status.h"
#include "shardwise/report/schema.h"
#include "validators.h"

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
void AddHelpCommand(CLI::App& app, Status& result);
void AddReportCommand(CLI::App& app, Status& result);
void AddCompareCommand(CLI::App& app, Status& result);
void AddRecommendCommand(CLI::App& app, Status& result);
void AddCalibrateCommand(CLI::App& app, Status& result);

// Writes JSON to stdout, pretty-printed. Objects carry "schema_version" (docs/json.md,
// report/schema.h), and their "notes" name flags where the library's name fields, as the notes
// on stderr do.
inline void PrintJson(const nlohmann::json& json) {
  if (json.is_object()) {
    nlohmann::json out = json;
    if (!out.contains("schema_version")) out["schema_version"] = report::kSchemaVersion;
    if (out.contains("notes") && out["notes"].is_array()) {
      for (nlohmann::json& note : out["notes"]) {
        if (note.is_string()) note = CliText(note.get<std::string>());
      }
    }
    std::cout << out.dump(2) << "\n";
    return;
  }
  std::cout << json.dump(2) << "\n";
}

// An option given an empty value ('' or "") would read as not given, its default silently used:
// every option of `sub` that takes a value refuses a blank one (positional arguments are the
// command's to judge), and every number option takes decimal digits only ("010" would read as
// octal 8, "0x10" as 16). The checks have no name, so --help shows the options as before.
inline void RefuseAmbiguousValues(CLI::App* sub) {
  static const CLI::Validator kNotBlank = NonBlank("give a value, or leave the option out", "");
  for (CLI::Option* opt : sub->get_options()) {
    if (!opt->nonpositional() || opt->get_type_size_max() == 0) continue;
    opt->check(kNotBlank);
    const std::string type = opt->get_type_name();
    if (type.starts_with("INT") || type.starts_with("UINT")) opt->transform(kDecimalInteger);
    if (type.starts_with("INT")) opt->check(kInt64Range);
    if (type.starts_with("FLOAT")) opt->check(kDecimalFloat);
  }
}

// Binds a command body to a subcommand: `body(opts)` runs when the subcommand is given. Call it
// after the subcommand's options are added (it makes them refuse blank and ambiguous values).
template <typename Options, typename Body>
void BindCommand(CLI::App* sub, std::shared_ptr<Options> opts, Status& result, Body body) {
  RefuseAmbiguousValues(sub);
  sub->callback([opts, &result, body]() { result = body(*opts); });
}

// Writes each note for the user to stderr as "shardwise: note: ...", options as flags.
void PrintNotes(const std::vector<std::string>& notes);

}  // namespace shardwise::cli
