#include "output_guard.h"

#include <fmt/format.h>

#include <filesystem>

#include "shardwise/common/input_policy.h"

namespace shardwise::cli {

Status CheckOutputPath(const std::string& path, bool force, std::string_view what,
                       const std::function<bool(const std::string& content)>& is_ours) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec && ec != std::errc::no_such_file_or_directory) {
    return Error(fmt::format("{}: cannot write there ({})", Printable(path, 200), ec.message()));
  }
  if (!fs::exists(st)) return Status();
  if (fs::is_directory(st)) {
    return Error(
        fmt::format("{}: is a directory; name the {} to write", Printable(path, 200), what));
  }
  if (force) return Status();
  const StatusOr<std::string> content =
      ReadBoundedFile(path, InputKind{"existing output", 256 << 20});
  if (content.ok() && is_ours(*content)) return Status();
  return Error(
      fmt::format("{}: exists and is not a {}; refusing to overwrite it (pick another "
                  "path, or add --force)",
                  Printable(path, 200), what));
}

}  // namespace shardwise::cli
