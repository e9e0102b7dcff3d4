// The model catalog: published config.json files under data/models/ (compiled into the binary),
// plus any config.json the user names by path. Thread-safe (read-only).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "shardwise/common/status.h"
#include "shardwise/model/model_spec.h"

namespace shardwise {

// Names of the built-in models, sorted.
std::vector<std::string> BuiltinModelNames();

// A built-in model by name, or a config.json by path (anything containing '/' or ending in
// ".json"). Unknown names get an error suggesting the nearest built-in names.
StatusOr<ModelSpec> LoadModel(std::string_view name_or_path);

// Every built-in model, in name order.
StatusOr<std::vector<ModelSpec>> LoadBuiltinModels();

}  // namespace shardwise
