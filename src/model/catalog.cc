#include "shardwise/model/catalog.h"

#include <algorithm>
#include <filesystem>

#include "shardwise/catalog/embedded.h"
#include "shardwise/common/json_fields.h"
#include "shardwise/common/suggest.h"
#include "shardwise/model/config_parser.h"

namespace shardwise {

std::vector<std::string> BuiltinModelNames() {
  std::vector<std::string> names;
  for (const auto* file : catalog::FilesIn("models")) names.push_back(catalog::StemOf(file->path));
  std::sort(names.begin(), names.end());
  return names;
}

namespace {

// "path/to/llama/config.json" -> "llama"; "path/to/my-model.json" -> "my-model".
std::string NameFromPath(const std::filesystem::path& path) {
  if (path.filename() == "config.json" && path.has_parent_path()) {
    const std::string parent = std::filesystem::absolute(path).parent_path().filename().string();
    if (!parent.empty()) return parent;
  }
  return path.stem().string();
}

}  // namespace

StatusOr<ModelSpec> LoadModel(std::string_view name_or_path) {
  const std::string name(name_or_path);
  if (auto text = catalog::ReadEmbedded("models/" + name + ".json")) {
    return ParseHfConfigText(*text, "data/models/" + name + ".json", name);
  }
  const bool looks_like_path = name.find('/') != std::string::npos || name.ends_with(".json");
  if (looks_like_path || std::filesystem::is_regular_file(name)) {
    SW_ASSIGN_OR_RETURN(nlohmann::json config, ReadJsonFile(name));
    return ParseHfConfig(config, name, NameFromPath(name));
  }
  return Error(UnknownNameMessage("model", name, BuiltinModelNames(),
                                  "see 'shardwise models', or pass a path to a config.json"));
}

StatusOr<std::vector<ModelSpec>> LoadBuiltinModels() {
  std::vector<ModelSpec> models;
  for (const std::string& name : BuiltinModelNames()) {
    SW_ASSIGN_OR_RETURN(ModelSpec spec, LoadModel(name));
    models.push_back(std::move(spec));
  }
  return models;
}

}  // namespace shardwise
