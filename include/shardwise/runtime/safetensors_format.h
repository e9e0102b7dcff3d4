// Validation of the safetensors container, separate from reading tensor data: the 8-byte
// header length, the JSON header (dtype, shape, data_offsets per tensor) and the index of a
// sharded checkpoint. Every tensor must have a supported dtype, non-negative dimensions whose
// byte size fits in 64 bits and matches its offsets, lie inside the file and not overlap another
// tensor; an index may only name shard files inside its own folder. Free functions; thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "shardwise/common/status.h"

namespace shardwise {

struct SafetensorsTensor {
  std::string file;
  std::string dtype;  // "F32", "BF16" or "F16"
  std::vector<int64_t> shape;
  uint64_t begin = 0;  // absolute byte offset of the data in `file`
  uint64_t end = 0;
};

// Bytes per element of a supported dtype; 0 for anything else.
int64_t SafetensorsElementBytes(const std::string& dtype);

// The largest header shardwise reads (real headers are a few hundred KB).
inline constexpr uint64_t kMaxSafetensorsHeaderBytes = 100u << 20;

// The header length stored in the first 8 bytes, checked against the file size.
StatusOr<uint64_t> SafetensorsHeaderLength(std::string_view first_8_bytes, uint64_t file_size,
                                           const std::string& path);

// Parses the JSON header of `path` (whose data starts at byte 8 + header.size() of a
// `file_size`-byte file) into `out`, validating every tensor.
Status ParseSafetensorsHeader(std::string_view header, uint64_t file_size, const std::string& path,
                              std::map<std::string, SafetensorsTensor>& out);

// The shard file names an index's weight_map lists, each a plain name inside the index's
// folder (no absolute path, no '..', no folder separators).
StatusOr<std::vector<std::string>> SafetensorsIndexShards(const nlohmann::json& index,
                                                          const std::string& source);

// Validates a whole safetensors file held in memory (for tests and fuzzing).
Status CheckSafetensorsBytes(std::string_view bytes, const std::string& source);

}  // namespace shardwise
