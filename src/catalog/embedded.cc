#include "shardwise/catalog/embedded.h"

#include <algorithm>
#include <filesystem>

#include "shardwise/common/json_fields.h"
#include "shardwise/common/suggest.h"

namespace shardwise::catalog {

std::vector<const EmbeddedFile*> FilesIn(std::string_view dir, std::string_view suffix) {
  std::vector<const EmbeddedFile*> out;
  const std::string prefix = std::string(dir) + "/";
  for (const EmbeddedFile& f : EmbeddedFiles()) {
    if (f.path.starts_with(prefix) && f.path.ends_with(suffix)) out.push_back(&f);
  }
  return out;
}

std::optional<std::string> ReadEmbedded(std::string_view path) {
  for (const EmbeddedFile& f : EmbeddedFiles()) {
    if (f.path == path) return f.content;
  }
  return std::nullopt;
}

std::string StemOf(std::string_view path) {
  const size_t slash = path.find_last_of('/');
  std::string_view base = slash == std::string_view::npos ? path : path.substr(slash + 1);
  const size_t dot = base.find_last_of('.');
  if (dot != std::string_view::npos) base = base.substr(0, dot);
  return std::string(base);
}

std::vector<std::string> NamesIn(std::string_view dir) {
  std::vector<std::string> names;
  for (const EmbeddedFile* f : FilesIn(dir)) names.push_back(StemOf(f->path));
  std::sort(names.begin(), names.end());
  return names;
}

StatusOr<std::string> LoadEntryText(std::string_view dir, std::string_view name_or_path,
                                    std::string_view what, std::string_view hint,
                                    std::string& source, const std::vector<std::string>* suggest) {
  const std::string name(name_or_path);
  const std::string path = std::string(dir) + "/" + name + ".json";
  if (auto text = ReadEmbedded(path)) {
    source = "data/" + path;
    return *text;
  }
  std::error_code ec;  // a name the OS refuses (too long) is not a file
  if (name.find('/') != std::string::npos || name.ends_with(".json") ||
      std::filesystem::exists(name, ec)) {
    source = Printable(name, 200);
    return ReadBoundedFile(name, dir == "models" ? kConfigInput : kCatalogInput);
  }
  return Error(UnknownNameMessage(what, name, suggest ? *suggest : NamesIn(dir), hint));
}

StatusOr<nlohmann::json> LoadEntry(std::string_view dir, std::string_view name_or_path,
                                   std::string_view what, std::string_view hint,
                                   std::string& source, const std::vector<std::string>* suggest) {
  SW_ASSIGN_OR_RETURN(std::string text,
                      LoadEntryText(dir, name_or_path, what, hint, source, suggest));
  return ParseJsonText(text, source);
}

}  // namespace shardwise::catalog
