// The built-in catalog: every file under data/ compiled into the binary (see
// cmake/embed_files.cmake), so the tool runs from any directory. Read-only; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace shardwise::catalog {

struct EmbeddedFile {
  std::string path;  // relative to data/, e.g. "models/llama-3.1-8b.json"
  std::string content;
};

const std::vector<EmbeddedFile>& EmbeddedFiles();

// Files whose path starts with `dir` + "/" and ends with `suffix`.
std::vector<const EmbeddedFile*> FilesIn(std::string_view dir, std::string_view suffix = ".json");

// The content of one file, if present.
std::optional<std::string> ReadEmbedded(std::string_view path);

// Base name without directory and extension: "models/llama-3.1-8b.json" -> "llama-3.1-8b".
std::string StemOf(std::string_view path);

// Sorted names of the built-in entries of `dir` ("models", "gpus", "clusters").
std::vector<std::string> NamesIn(std::string_view dir);

}  // namespace shardwise::catalog

#include <nlohmann/json.hpp>

#include "shardwise/common/status.h"

namespace shardwise::catalog {

// A catalog entry's JSON by name, or a user's file by path (anything with '/' or ending in
// ".json", or an existing file). `source` receives where it came from, for error messages.
// Unknown names get "unknown <what> 'x'; did you mean ...? (<hint>)", the suggestions drawn from
// `suggest` where given (names the caller also accepts, such as aliases), else NamesIn(dir).
StatusOr<nlohmann::json> LoadEntry(std::string_view dir, std::string_view name_or_path,
                                   std::string_view what, std::string_view hint,
                                   std::string& source,
                                   const std::vector<std::string>* suggest = nullptr);
// The same, returning the entry's text unparsed.
StatusOr<std::string> LoadEntryText(std::string_view dir, std::string_view name_or_path,
                                    std::string_view what, std::string_view hint,
                                    std::string& source,
                                    const std::vector<std::string>* suggest = nullptr);

}  // namespace shardwise::catalog
