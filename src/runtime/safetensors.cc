// safetensors: an 8-byte little-endian header length, a JSON header mapping tensor names to
// {dtype, shape, data_offsets}, then the raw data. Slices are read with seek + read, so a
// rank touches only the bytes of its shard.
#include <fmt/format.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "shardwise/common/json_fields.h"
#include "shardwise/runtime/safetensors_format.h"
#include "shardwise/runtime/weights.h"

namespace shardwise {
namespace {

using TensorInfo = SafetensorsTensor;

float HalfToFloat(uint16_t h) {
  const uint32_t sign = (h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1F;
  uint32_t mant = h & 0x3FF;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: renormalise
      exp = 127 - 15 + 1;
      while ((mant & 0x400) == 0) {
        mant <<= 1;
        --exp;
      }
      bits = sign | (exp << 23) | ((mant & 0x3FF) << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7F800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

float Bf16ToFloat(uint16_t b) {
  const uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

Status ReadHeader(const std::string& path, std::map<std::string, TensorInfo>& out) {
  SW_RETURN_IF_ERROR(CheckRegularFile(path, InputKind{"safetensors file", INT64_MAX}));
  std::error_code ec;
  const uint64_t file_size = std::filesystem::file_size(path, ec);
  std::ifstream in(path, std::ios::binary);
  if (ec || !in) return Error(fmt::format("{}: cannot open the weights file", path));
  std::string length(8, '\0');
  in.read(length.data(), 8);
  length.resize(static_cast<size_t>(in.gcount()));
  SW_ASSIGN_OR_RETURN(uint64_t header_len, SafetensorsHeaderLength(length, file_size, path));
  std::string header(header_len, '\0');
  if (!in.read(header.data(), static_cast<std::streamsize>(header_len))) {
    return Error(fmt::format("{}: truncated while reading the header", path));
  }
  return ParseSafetensorsHeader(header, file_size, path, out);
}

class Safetensors final : public WeightSource {
 public:
  explicit Safetensors(std::map<std::string, TensorInfo> tensors) : tensors_(std::move(tensors)) {}

  StatusOr<std::vector<float>> Read(const std::string& name, int64_t shape_rows,
                                    int64_t shape_cols, Slice rows, Slice cols) override {
    auto it = tensors_.find(name);
    if (it == tensors_.end()) {
      return Error(fmt::format("the checkpoint has no tensor '{}' (does config.json match the "
                               "weights?)",
                               name));
    }
    const TensorInfo& t = it->second;
    const bool one_d = shape_rows == 1 && t.shape.size() == 1;
    const bool matches = one_d ? t.shape[0] == shape_cols
                               : (t.shape.size() == 2 && t.shape[0] == shape_rows && t.shape[1] == shape_cols) ||
                                     (t.shape.size() == 3 && t.shape[0] * t.shape[1] == shape_rows &&
                                      t.shape[2] == shape_cols);  // [E, a, b] read as [E x a, b]
    if (!matches) {
      std::string got;
      for (int64_t d : t.shape) got += (got.empty() ? "" : ", ") + std::to_string(d);
      return Error(fmt::format("{}: tensor {} has shape [{}] but config.json implies [{}, {}]; "
                               "the config and the weights disagree",
                               t.file, name, got, shape_rows, shape_cols));
    }
    std::ifstream in(t.file, std::ios::binary);
    if (!in) return Error(fmt::format("{}: cannot open the weights file", t.file));
    const int64_t eb = SafetensorsElementBytes(t.dtype);
    std::vector<char> raw(static_cast<size_t>(cols.size() * eb));
    std::vector<float> out;
    out.reserve(static_cast<size_t>(rows.size() * cols.size()));
    for (int64_t i = rows.begin; i < rows.end; ++i) {
      in.seekg(static_cast<std::streamoff>(t.begin + (i * shape_cols + cols.begin) * eb));
      if (!in.read(raw.data(), static_cast<std::streamsize>(raw.size()))) {
        return Error(fmt::format("{}: truncated while reading tensor {}", t.file, name));
      }
      for (int64_t j = 0; j < cols.size(); ++j) {
        const char* p = raw.data() + j * eb;
        uint16_t h;
        float f;
        if (t.dtype == "F32") {
          std::memcpy(&f, p, 4);
        } else {
          std::memcpy(&h, p, 2);
          f = t.dtype == "BF16" ? Bf16ToFloat(h) : HalfToFloat(h);
        }
        out.push_back(f);
      }
    }
    return out;
  }

 private:
  std::map<std::string, TensorInfo> tensors_;
};

}  // namespace

StatusOr<std::unique_ptr<WeightSource>> OpenSafetensors(const std::string& dir) {
  namespace fs = std::filesystem;
  std::map<std::string, TensorInfo> tensors;
  const fs::path single = fs::path(dir) / "model.safetensors";
  const fs::path index = fs::path(dir) / "model.safetensors.index.json";
  std::error_code ec;
  if (fs::exists(index, ec)) {
    SW_ASSIGN_OR_RETURN(nlohmann::json j, ReadJsonFile(index.string(), kIndexInput));
    SW_ASSIGN_OR_RETURN(std::vector<std::string> files, SafetensorsIndexShards(j, index.string()));
    for (const std::string& f : files) {
      const std::string path = (fs::path(dir) / f).string();
      if (!fs::exists(path, ec)) {
        return Error(fmt::format("{}: shard listed in the index is missing", path));
      }
      SW_RETURN_IF_ERROR(ReadHeader(path, tensors));
    }
  } else if (fs::exists(single, ec)) {
    SW_RETURN_IF_ERROR(ReadHeader(single.string(), tensors));
  } else {
    return Error(fmt::format("{}: no model.safetensors or model.safetensors.index.json there",
                             dir));
  }
  return std::unique_ptr<WeightSource>(std::make_unique<Safetensors>(std::move(tensors)));
}

Status WriteSafetensors(const std::string& path, const std::map<std::string, NamedTensor>& tensors) {
  nlohmann::json header = nlohmann::json::object();
  uint64_t offset = 0;
  for (const auto& [name, t] : tensors) {
    const uint64_t bytes = t.data.size() * 4;
    header[name] = {{"dtype", "F32"}, {"shape", t.shape}, {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  std::string text = header.dump();
  while (text.size() % 8 != 0) text += ' ';  // the format pads the header to 8 bytes
  std::ofstream out(path, std::ios::binary);
  if (!out) return Error(fmt::format("{}: cannot write", path));
  const uint64_t len = text.size();
  out.write(reinterpret_cast<const char*>(&len), 8);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  for (const auto& [name, t] : tensors) {
    out.write(reinterpret_cast<const char*>(t.data.data()),
              static_cast<std::streamsize>(t.data.size() * 4));
  }
  return out ? Status() : Error(fmt::format("{}: write failed", path));
}

}  // namespace shardwise
