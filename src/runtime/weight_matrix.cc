#include "shardwise/runtime/weight_matrix.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>

#include "shardwise/common/suggest.h"

namespace shardwise {
namespace {

struct FormatInfo {
  WeightStorage format;
  std::string_view name;
  double bytes;
};

constexpr std::array<FormatInfo, 3> kFormats = {{
    {WeightStorage::kFp32, "fp32", 4.0},
    {WeightStorage::kBf16, "bf16", 2.0},
    {WeightStorage::kInt8, "int8", 1.0},
}};

const FormatInfo& Info(WeightStorage format) {
  for (const FormatInfo& info : kFormats) {
    if (info.format == format) return info;
  }
  SW_CHECK(false, "weight format missing from kFormats");
  return kFormats[0];
}

constexpr float kInt8Max = 127.0f;  // symmetric int8: codes -127..127

}  // namespace

std::string_view WeightStorageName(WeightStorage format) { return Info(format).name; }

std::vector<std::string> WeightStorageNames() {
  std::vector<std::string> names;
  for (const FormatInfo& info : kFormats) names.emplace_back(info.name);
  return names;
}

StatusOr<WeightStorage> ParseWeightStorage(std::string_view text) {
  for (const FormatInfo& info : kFormats) {
    if (info.name == text) return info.format;
  }
  return Error(UnknownNameMessage("`dtype`", text, WeightStorageNames(),
                                  "the runtime keeps weights in fp32, bf16 or int8"));
}

double WeightStorageBytes(WeightStorage format) { return Info(format).bytes; }

uint16_t ToBf16(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  if (std::isnan(value)) return static_cast<uint16_t>((bits >> 16) | 0x40);  // stays a quiet NaN
  // Round to nearest even: add 0x7fff plus the lowest kept bit, then truncate.
  const uint32_t rounded = bits + 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(rounded >> 16);
}

float FromBf16(uint16_t value) { return std::bit_cast<float>(static_cast<uint32_t>(value) << 16); }

int8_t QuantizeInt8(float value, float scale) {
  const float code = std::clamp(std::nearbyint(value / scale), -kInt8Max, kInt8Max);
  return static_cast<int8_t>(code);
}

float Int8Scale(float abs_max) { return abs_max > 0 ? abs_max / kInt8Max : 1.0f; }

std::vector<float> RowAbsMax(const std::vector<float>& values, int64_t rows, int64_t cols) {
  std::vector<float> out(static_cast<size_t>(rows), 0.0f);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) out[r] = std::max(out[r], std::fabs(values[r * cols + c]));
  }
  return out;
}

WeightMatrix WeightMatrix::Make(std::vector<float> values, int64_t rows, int64_t cols,
                                WeightStorage format, std::span<const float> row_abs_max) {
  SW_CHECK(static_cast<int64_t>(values.size()) == rows * cols, "WeightMatrix: wrong value count");
  WeightMatrix m;
  m.rows_ = rows;
  m.cols_ = cols;
  m.format_ = format;
  switch (format) {
    case WeightStorage::kFp32:
      m.f32_ = std::move(values);
      break;
    case WeightStorage::kBf16:
      m.bf16_.resize(values.size());
      std::transform(values.begin(), values.end(), m.bf16_.begin(), ToBf16);
      break;
    case WeightStorage::kInt8: {
      std::vector<float> own;
      if (row_abs_max.empty()) {
        own = RowAbsMax(values, rows, cols);
        row_abs_max = own;
      }
      SW_CHECK(static_cast<int64_t>(row_abs_max.size()) == rows, "WeightMatrix: one max per row");
      m.int8_.resize(values.size());
      m.scales_.resize(static_cast<size_t>(rows));
      for (int64_t r = 0; r < rows; ++r) {
        const float scale = Int8Scale(row_abs_max[r]);
        m.scales_[r] = scale;
        for (int64_t c = 0; c < cols; ++c) {
          m.int8_[r * cols + c] = QuantizeInt8(values[r * cols + c], scale);
        }
      }
      break;
    }
  }
  return m;
}

size_t WeightMatrix::bytes() const {
  return f32_.size() * sizeof(float) + bf16_.size() * sizeof(uint16_t) + int8_.size() +
         scales_.size() * sizeof(float);
}

void WeightMatrix::DecodeRow(int64_t r, float* out) const {
  switch (format_) {
    case WeightStorage::kFp32:
      std::copy_n(f32_.data() + r * cols_, cols_, out);
      break;
    case WeightStorage::kBf16:
      std::transform(bf16_.data() + r * cols_, bf16_.data() + (r + 1) * cols_, out, FromBf16);
      break;
    case WeightStorage::kInt8:
      for (int64_t c = 0; c < cols_; ++c) out[c] = scales_[r] * int8_[r * cols_ + c];
      break;
  }
}

std::vector<float> WeightMatrix::ToFloat() const {
  std::vector<float> out(static_cast<size_t>(rows_ * cols_));
  for (int64_t r = 0; r < rows_; ++r) DecodeRow(r, out.data() + r * cols_);
  return out;
}

StatusOr<WeightMatrix> ReadWeightMatrix(WeightSource& w, const std::string& name,
                                        int64_t shape_rows, int64_t shape_cols, Slice rs, Slice cs,
                                        WeightStorage format) {
  const bool all_columns = cs.begin == 0 && cs.end == shape_cols;
  if (format != WeightStorage::kInt8 || all_columns) {
    SW_ASSIGN_OR_RETURN(std::vector<float> values, w.Read(name, shape_rows, shape_cols, rs, cs));
    return WeightMatrix::Make(std::move(values), rs.size(), cs.size(), format);
  }
  SW_ASSIGN_OR_RETURN(std::vector<float> full,
                      w.Read(name, shape_rows, shape_cols, rs, {0, shape_cols}));
  const std::vector<float> abs_max = RowAbsMax(full, rs.size(), shape_cols);
  std::vector<float> values(static_cast<size_t>(rs.size() * cs.size()));
  for (int64_t r = 0; r < rs.size(); ++r) {
    std::copy_n(full.data() + r * shape_cols + cs.begin, cs.size(), values.data() + r * cs.size());
  }
  return WeightMatrix::Make(std::move(values), rs.size(), cs.size(), format, abs_max);
}

}  // namespace shardwise
