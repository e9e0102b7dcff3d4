// Integer arithmetic that reports overflow instead of wrapping, for sizes derived from user
// input (products of model dimensions, layout degrees, cluster fan-outs). Header-only.
#pragma once

#include <cstdint>
#include <optional>

namespace shardwise {

// a * b, or nullopt when it does not fit in int64_t.
inline std::optional<int64_t> CheckedMul(int64_t a, int64_t b) {
  int64_t out = 0;
  if (__builtin_mul_overflow(a, b, &out)) return std::nullopt;
  return out;
}

// a + b, or nullopt when it does not fit in int64_t.
inline std::optional<int64_t> CheckedAdd(int64_t a, int64_t b) {
  int64_t out = 0;
  if (__builtin_add_overflow(a, b, &out)) return std::nullopt;
  return out;
}

// The product of a list, or nullopt on overflow.
inline std::optional<int64_t> CheckedProduct(std::initializer_list<int64_t> factors) {
  int64_t out = 1;
  for (int64_t f : factors) {
    const auto next = CheckedMul(out, f);
    if (!next) return std::nullopt;
    out = *next;
  }
  return out;
}

// Whether a finite double lies where a cast to int64_t is defined.
inline bool FitsInt64(double v) { return v >= -9.2e18 && v <= 9.2e18; }

}  // namespace shardwise
