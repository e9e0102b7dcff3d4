// WeightMatrix: one rank's shard of a weight matrix ([rows x cols], row-major, each row one
// output unit) in the format the run keeps weights in memory: fp32, bf16 (the upper half of an
// fp32, rounded to nearest even; the kernels widen it as they read it) or int8 with one fp32
// scale per row (symmetric: row r holds round(w / s_r), s_r = max |w of the full row r| / 127).
// The int8 scale is taken over the whole row of the unsharded matrix even when the shard holds
// only some of its columns, so every sharding quantises every weight identically and sharded
// runs still equal the unsharded one. Immutable after construction; thread-safe to read.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "shardwise/common/status.h"
#include "shardwise/runtime/weights.h"

namespace shardwise {

enum class WeightStorage { kFp32, kBf16, kInt8 };

std::string_view WeightStorageName(WeightStorage format);
std::vector<std::string> WeightStorageNames();
// "fp32", "bf16" or "int8"; the error lists them.
StatusOr<WeightStorage> ParseWeightStorage(std::string_view text);
// Storage bytes per weight (int8's per-row scale adds 4 / cols and is not counted).
double WeightStorageBytes(WeightStorage format);

// bf16 from fp32, rounded to nearest even (NaN stays NaN), and back.
uint16_t ToBf16(float value);
float FromBf16(uint16_t value);
// The int8 code of `value` for a row scale `scale` (> 0): round to nearest, clamped to +-127.
int8_t QuantizeInt8(float value, float scale);
// The scale of an int8 row whose largest magnitude is `abs_max`: abs_max / 127 (1 for a row of
// zeros, whose codes are all 0).
float Int8Scale(float abs_max);

class WeightMatrix {
 public:
  WeightMatrix() = default;
  // `values` [rows x cols] stored in `format`. int8: row r's scale comes from row_abs_max[r]
  // (the largest |w| of the unsharded row) or, when row_abs_max is empty, from `values` itself.
  static WeightMatrix Make(std::vector<float> values, int64_t rows, int64_t cols,
                           WeightStorage format, std::span<const float> row_abs_max = {});

  int64_t rows() const { return rows_; }
  int64_t cols() const { return cols_; }
  WeightStorage format() const { return format_; }
  bool empty() const { return rows_ == 0; }
  size_t bytes() const;

  // Row r as fp32 (the stored value, dequantised), into out[cols].
  void DecodeRow(int64_t r, float* out) const;
  std::vector<float> ToFloat() const;

  // The stored data of the matrix's format (the others are empty): [rows x cols] values, and
  // for int8 the [rows] scales.
  const float* f32() const { return f32_.data(); }
  const uint16_t* bf16() const { return bf16_.data(); }
  const int8_t* int8() const { return int8_.data(); }
  const float* scales() const { return scales_.data(); }

 private:
  int64_t rows_ = 0, cols_ = 0;
  WeightStorage format_ = WeightStorage::kFp32;
  std::vector<float> f32_;
  std::vector<uint16_t> bf16_;
  std::vector<int8_t> int8_;
  std::vector<float> scales_;
};

// Rows `rs` and columns `cs` of the [shape_rows x shape_cols] tensor `name` as a WeightMatrix
// in `format`. For int8 shards holding only some columns, the full rows are read once to find
// each row's largest magnitude (the scale must not depend on the sharding).
StatusOr<WeightMatrix> ReadWeightMatrix(WeightSource& weights, const std::string& name,
                                        int64_t shape_rows, int64_t shape_cols, Slice rs, Slice cs,
                                        WeightStorage format);

// Largest |value| of each of the `rows` rows of a [rows x cols] matrix.
std::vector<float> RowAbsMax(const std::vector<float>& values, int64_t rows, int64_t cols);

}  // namespace shardwise
