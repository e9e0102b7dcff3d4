// The one input policy every reader of user files follows: a size limit per file kind (named in
// the error), only regular files (not /dev/zero, a FIFO or a directory), no filesystem
// exception escaping (names longer than the OS allows, permission errors), JSON nesting bounded
// before it is parsed, and file contents quoted in errors only as short printable excerpts.
// Free functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "shardwise/common/status.h"

namespace shardwise {

// What a file is and the most bytes shardwise reads of it. Real files sit far below these:
// config.json files are a few KB, safetensors index files under 1 MB, nccl-tests logs a few KB,
// saved plans under 1 MB.
struct InputKind {
  const char* what;   // "config.json", "cluster file", ... (used in messages)
  int64_t max_bytes;  // larger files are refused, with this limit in the message
};

inline constexpr InputKind kConfigInput{"model config", 4 << 20};
inline constexpr InputKind kCatalogInput{"catalog file", 4 << 20};  // GPU and cluster files
inline constexpr InputKind kProfileInput{"profile", 1 << 20};       // level and host profiles
inline constexpr InputKind kPlanInput{"saved plan", 64 << 20};
inline constexpr InputKind kIndexInput{"safetensors index", 64 << 20};
inline constexpr InputKind kNcclLogInput{"nccl-tests log", 16 << 20};
inline constexpr InputKind kTraceInput{"trace", 256 << 20};
// Benchmark results: vLLM's --save-detailed keeps every generated text.
inline constexpr InputKind kBenchmarkInput{"benchmark results", 256 << 20};
inline constexpr InputKind kJsonInput{"JSON file", 64 << 20};  // any other JSON input

// Deepest JSON nesting accepted (real configs nest 3 or 4 levels).
inline constexpr int kMaxJsonDepth = 64;

// Whether `path` names a readable regular file; the error says what it is instead.
Status CheckRegularFile(const std::string& path, const InputKind& kind);

// Reads a whole regular file of at most kind.max_bytes bytes.
StatusOr<std::string> ReadBoundedFile(const std::string& path, const InputKind& kind);

// Refuses JSON text nested deeper than kMaxJsonDepth (checked without recursion).
Status CheckJsonDepth(std::string_view text, const std::string& source);

// `text` cut to `max_chars` with every byte outside printable ASCII shown as '?', for quoting
// user input in a one-line error without writing control bytes to the terminal.
std::string Printable(std::string_view text, size_t max_chars = 60);

}  // namespace shardwise
