#include "shardwise/catalog/embedded.h"

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

}  // namespace shardwise::catalog
