#include "shardwise/runtime/safetensors_format.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <set>

#include "shardwise/common/checked_math.h"
#include "shardwise/common/json_fields.h"

namespace shardwise {
namespace {

// A tensor entry of the header, validated; `data_size` is the byte count after the header.
StatusOr<SafetensorsTensor> ParseTensor(const std::string& name, const nlohmann::json& v,
                                        uint64_t data_begin, uint64_t data_size,
                                        const std::string& path) {
  const std::string where = fmt::format("{}: tensor '{}'", path, Printable(name));
  if (!v.is_object()) {
    return Error(fmt::format("{} must be an object with dtype, shape and data_offsets", where));
  }
  const JsonObject o{v, where};
  SafetensorsTensor t;
  t.file = path;
  SW_ASSIGN_OR_RETURN(t.dtype, o.String("dtype"));
  const int64_t element_bytes = SafetensorsElementBytes(t.dtype);
  if (element_bytes == 0) {
    return Error(
        fmt::format("{} has dtype {}; supported: F32, BF16, F16", where, Printable(t.dtype)));
  }
  if (!v.contains("shape") || !v.at("shape").is_array() || v.at("shape").size() > 8) {
    return Error(fmt::format("{}: 'shape' must be a list of at most 8 dimensions", where));
  }
  int64_t bytes = element_bytes;
  for (const nlohmann::json& d : v.at("shape")) {
    if (!d.is_number_integer() || d.get<int64_t>() < 0 ||
        (d.is_number_unsigned() && d.get<uint64_t>() > INT64_MAX)) {
      return Error(fmt::format("{}: shape entries must be non-negative integers, got {}", where,
                               Excerpt(d)));
    }
    const std::optional<int64_t> next = CheckedMul(bytes, d.get<int64_t>());
    if (!next) return Error(fmt::format("{}: the shape's byte size overflows", where));
    bytes = *next;
    t.shape.push_back(d.get<int64_t>());
  }
  const auto& offsets = v.contains("data_offsets") ? v.at("data_offsets") : nlohmann::json();
  if (!offsets.is_array() || offsets.size() != 2 || !offsets[0].is_number_unsigned() ||
      !offsets[1].is_number_unsigned() || offsets[0].get<uint64_t>() > offsets[1].get<uint64_t>()) {
    return Error(
        fmt::format("{}: 'data_offsets' must be [begin, end] with 0 <= begin <= end", where));
  }
  const uint64_t begin = offsets[0].get<uint64_t>(), end = offsets[1].get<uint64_t>();
  if (end > data_size) {
    return Error(
        fmt::format("{} ends at byte {} of the {}-byte data section: the file is "
                    "truncated or corrupt",
                    where, end, data_size));
  }
  if (end - begin != static_cast<uint64_t>(bytes)) {
    return Error(fmt::format("{} has {} bytes for a shape of {} bytes", where, end - begin, bytes));
  }
  t.begin = data_begin + begin;
  t.end = data_begin + end;
  return t;
}

}  // namespace

int64_t SafetensorsElementBytes(const std::string& dtype) {
  if (dtype == "F32") return 4;
  if (dtype == "BF16" || dtype == "F16") return 2;
  return 0;
}

StatusOr<uint64_t> SafetensorsHeaderLength(std::string_view first_8_bytes, uint64_t file_size,
                                           const std::string& path) {
  if (first_8_bytes.size() < 8 || file_size < 8) {
    return Error(fmt::format("{}: truncated safetensors file (no header length)", path));
  }
  uint64_t header_len = 0;
  std::memcpy(&header_len, first_8_bytes.data(), 8);  // little-endian, as the format says
  if (header_len > file_size - 8 || header_len > kMaxSafetensorsHeaderBytes) {
    return Error(
        fmt::format("{}: truncated or corrupt safetensors file (header of {} bytes in a "
                    "{}-byte file; at most {} accepted)",
                    path, header_len, file_size, kMaxSafetensorsHeaderBytes));
  }
  return header_len;
}

Status ParseSafetensorsHeader(std::string_view header, uint64_t file_size, const std::string& path,
                              std::map<std::string, SafetensorsTensor>& out) {
  SW_ASSIGN_OR_RETURN(nlohmann::json j, ParseJsonText(std::string(header), path + " (header)"));
  if (!j.is_object()) {
    return Error(fmt::format("{}: the safetensors header must be a JSON object", path));
  }
  const uint64_t data_begin = 8 + header.size();
  const uint64_t data_size = file_size - data_begin;
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  for (const auto& [name, v] : j.items()) {
    if (name == "__metadata__") continue;
    SW_ASSIGN_OR_RETURN(SafetensorsTensor t, ParseTensor(name, v, data_begin, data_size, path));
    if (out.contains(name)) {
      return Error(fmt::format("{}: tensor '{}' appears in two files", path, Printable(name)));
    }
    if (t.end > t.begin) ranges.emplace_back(t.begin - data_begin, t.end - data_begin);
    out[name] = std::move(t);
  }
  // Tensors must not share bytes: an aliased tensor would silently duplicate another's weights.
  std::sort(ranges.begin(), ranges.end());
  for (size_t i = 1; i < ranges.size(); ++i) {
    if (ranges[i].first < ranges[i - 1].second) {
      return Error(
          fmt::format("{}: two tensors overlap at data bytes {} to {}; the header is "
                      "corrupt",
                      path, ranges[i].first, ranges[i - 1].second));
    }
  }
  return Status();
}

StatusOr<std::vector<std::string>> SafetensorsIndexShards(const nlohmann::json& index,
                                                          const std::string& source) {
  if (!index.is_object() || !index.contains("weight_map") || !index.at("weight_map").is_object()) {
    return Error(
        fmt::format("{}: missing 'weight_map' (an object of tensor name -> shard file)", source));
  }
  std::set<std::string> files;
  for (const auto& [name, file] : index.at("weight_map").items()) {
    if (!file.is_string()) {
      return Error(fmt::format("{}: weight_map['{}'] must be a shard file name, got {}", source,
                               Printable(name), Excerpt(file)));
    }
    const std::string f = file.get<std::string>();
    if (f.empty() || f.size() > 255 || f.find('/') != std::string::npos ||
        f.find('\\') != std::string::npos || f == "." || f == ".." ||
        f.find('\0') != std::string::npos) {
      return Error(
          fmt::format("{}: shard '{}' must be a file name inside the checkpoint folder "
                      "(no folders, no '..', at most 255 characters)",
                      source, Printable(f)));
    }
    files.insert(f);
  }
  return std::vector<std::string>(files.begin(), files.end());
}

Status CheckSafetensorsBytes(std::string_view bytes, const std::string& source) {
  SW_ASSIGN_OR_RETURN(uint64_t header_len, SafetensorsHeaderLength(bytes, bytes.size(), source));
  std::map<std::string, SafetensorsTensor> tensors;
  return ParseSafetensorsHeader(bytes.substr(8, header_len), bytes.size(), source, tensors);
}

}  // namespace shardwise
