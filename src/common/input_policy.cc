#include "shardwise/common/input_policy.h"

#include <fmt/format.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <system_error>

namespace shardwise {

namespace fs = std::filesystem;

Status CheckRegularFile(const std::string& path, const InputKind& kind) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec && ec != std::errc::no_such_file_or_directory) {
    return Error(
        fmt::format("{}: cannot read the {} ({})", Printable(path, 200), kind.what, ec.message()));
  }
  if (!fs::exists(st)) {
    return Error(fmt::format("{}: cannot open file (check the path)", Printable(path, 200)));
  }
  if (fs::is_directory(st)) {
    return Error(
        fmt::format("{}: is a directory; pass the {} itself", Printable(path, 200), kind.what));
  }
  if (!fs::is_regular_file(st)) {
    return Error(
        fmt::format("{}: is not a regular file (a device, pipe or socket); pass a {} "
                    "saved on disk",
                    Printable(path, 200), kind.what));
  }
  return Status();
}

StatusOr<std::string> ReadBoundedFile(const std::string& path, const InputKind& kind) {
  SW_RETURN_IF_ERROR(CheckRegularFile(path, kind));
  const auto too_large = [&](uint64_t bytes) {
    return Error(
        fmt::format("{}: the file has {} bytes, more than the {} limit of {} bytes; is it "
                    "the right file?",
                    Printable(path, 200), bytes, kind.what, kind.max_bytes));
  };
  std::error_code ec;
  const uint64_t size = fs::file_size(path, ec);
  if (ec) {
    return Error(
        fmt::format("{}: cannot read the {} ({})", Printable(path, 200), kind.what, ec.message()));
  }
  if (size > static_cast<uint64_t>(kind.max_bytes)) return too_large(size);
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error(fmt::format("{}: cannot open file (check the path)", Printable(path, 200)));
  // Read at most one byte past the limit, in case the file grew since it was measured.
  std::string text(static_cast<size_t>(size) + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  const auto got = static_cast<uint64_t>(in.gcount());
  if (got > static_cast<uint64_t>(kind.max_bytes)) return too_large(got);
  text.resize(static_cast<size_t>(got));
  return text;
}

Status CheckJsonDepth(std::string_view text, const std::string& source) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // skip the escaped character
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth) {
        return Error(fmt::format("{}: JSON nested more than {} levels deep; is it the right file?",
                                 source, kMaxJsonDepth));
      }
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return Status();
}

std::string Printable(std::string_view text, size_t max_chars) {
  std::string out;
  for (size_t i = 0; i < text.size() && i < max_chars; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    out += c >= 0x20 && c < 0x7F ? static_cast<char>(c) : '?';
  }
  if (text.size() > max_chars) out += "...";
  return out;
}

}  // namespace shardwise
