#include "shardwise/model/catalog.h"

#include <fmt/format.h>

#include <filesystem>

#include "shardwise/catalog/embedded.h"
#include "shardwise/common/json_fields.h"
#include "shardwise/common/python_json.h"
#include "shardwise/model/config_parser.h"

namespace shardwise {

std::vector<std::string> BuiltinModelNames() { return catalog::NamesIn("models"); }

namespace {

// A catalog name stays itself; "path/to/llama/config.json" -> "llama";
// "path/to/my-model.json" -> "my-model".
std::string NameOf(const std::string& name_or_path, const std::string& source) {
  if (source.starts_with("data/")) return name_or_path;
  const std::filesystem::path path(name_or_path);
  if (path.filename() == "config.json" && path.has_parent_path()) {
    const std::string parent = std::filesystem::absolute(path).parent_path().filename().string();
    if (!parent.empty()) return parent;
  }
  return path.stem().string();
}

// "org/name" with no such file: a Hugging Face id, which shardwise cannot fetch (no network).
bool LooksLikeHubId(const std::string& name) {
  const size_t slash = name.find('/');
  return slash != std::string::npos && slash > 0 && slash + 1 < name.size() &&
         name.find('/', slash + 1) == std::string::npos && !name.ends_with(".json") &&
         !name.starts_with(".") && !std::filesystem::exists(name);
}

}  // namespace

StatusOr<ModelSpec> LoadModel(std::string_view name_or_path) {
  std::string name(name_or_path);
  if (LooksLikeHubId(name)) {
    return Error(fmt::format(
        "'{}' looks like a Hugging Face model id; shardwise reads models offline: download its "
        "config.json (e.g. 'huggingface-cli download {} config.json --local-dir DIR') and pass "
        "--model DIR/config.json, or use a catalog name from 'shardwise models'",
        name, name));
  }
  // A directory holding a config.json (a downloaded checkpoint) stands for that file.
  if (std::filesystem::is_directory(name) &&
      std::filesystem::is_regular_file(std::filesystem::path(name) / "config.json")) {
    name = (std::filesystem::path(name) / "config.json").string();
  }
  name_or_path = name;
  std::string source;
  SW_ASSIGN_OR_RETURN(
      std::string text,
      catalog::LoadEntryText("models", name_or_path, "model",
                             "see 'shardwise models', or pass a path to a config.json", source));
  const std::string model_name = NameOf(std::string(name_or_path), source);
  if (source.starts_with("data/")) return ParseHfConfigText(text, source, model_name);
  // A ModelOpt export keeps its quantization in hf_quant_config.json beside config.json.
  const std::filesystem::path quant =
      std::filesystem::path(std::string(name_or_path)).parent_path() / "hf_quant_config.json";
  std::error_code ec;  // a path the OS refuses is no quantization file
  if (!std::filesystem::exists(quant, ec)) return ParseHfConfigText(text, source, model_name);
  SW_ASSIGN_OR_RETURN(nlohmann::json quant_config, ReadJsonFile(quant.string(), kConfigInput));
  SW_ASSIGN_OR_RETURN(nlohmann::json config, ParseJsonText(QuoteNonFiniteLiterals(text), source));
  return ParseHfConfig(config, source, model_name, &quant_config);
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
