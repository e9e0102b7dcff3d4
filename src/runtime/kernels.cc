#include "shardwise/runtime/kernels.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "simd/kernel_set.h"

namespace shardwise::kernels {
namespace {

// A thread's share of a product is at least this many weight rows (a multiple of every kernel
// set's tile width), so a small product is not split into pieces shorter than a handoff.
constexpr int64_t kRowsPerPart = 64;

// Runs `product` on rows [begin, end) of w, split over the pool.
template <typename F>
void SplitRows(int64_t n, ThreadPool* pool, F&& product) {
  const int64_t threads = pool ? pool->size() : 1;
  const int64_t parts = std::clamp<int64_t>(n / kRowsPerPart, 1, threads);
  if (parts == 1) return product(0, n);
  // Part boundaries on multiples of kRowsPerPart keep every part's tiles full.
  const int64_t chunk = ((n + parts - 1) / parts + kRowsPerPart - 1) / kRowsPerPart * kRowsPerPart;
  pool->Run(static_cast<int>(parts), [&](int p) {
    const int64_t begin = std::min(n, p * chunk), end = std::min(n, begin + chunk);
    if (begin < end) product(begin, end);
  });
}

// Activations rounded to bf16, or quantised to int8 per block of kInt8Block values with their
// scales and the kernels' offsets (kernel_set.h's Int8Args), kept per thread so a product
// allocates nothing once its sizes have been seen.
struct RoundedRows {
  std::vector<uint16_t> bf16;
  std::vector<int8_t> codes;
  std::vector<float> scales, offsets;
};

RoundedRows& Rounded() {
  thread_local RoundedRows rows;
  return rows;
}

const uint16_t* RoundToBf16(const float* x, int64_t m, int64_t k) {
  std::vector<uint16_t>& out = Rounded().bf16;
  out.resize(static_cast<size_t>(m * k));
  for (int64_t i = 0; i < m * k; ++i) out[static_cast<size_t>(i)] = ToBf16(x[i]);
  return out.data();
}

// Quantises each row of x in blocks of kInt8Block (the last one may be short).
RoundedRows& QuantizeRows(const float* x, int64_t m, int64_t k) {
  RoundedRows& r = Rounded();
  const int64_t blocks = (k + kInt8Block - 1) / kInt8Block;
  r.codes.resize(static_cast<size_t>(m * k));
  r.scales.resize(static_cast<size_t>(m * blocks));
  r.offsets.resize(static_cast<size_t>(m));
  for (int64_t i = 0; i < m; ++i) {
    double offset = 0;
    for (int64_t b = 0; b < blocks; ++b) {
      const int64_t begin = b * kInt8Block, end = std::min(k, begin + kInt8Block);
      float abs_max = 0;
      for (int64_t kk = begin; kk < end; ++kk)
        abs_max = std::max(abs_max, std::fabs(x[i * k + kk]));
      const float scale = Int8Scale(abs_max);
      int32_t sum = 0;
      for (int64_t kk = begin; kk < end; ++kk) {
        const int8_t code = QuantizeInt8(x[i * k + kk], scale);
        r.codes[static_cast<size_t>(i * k + kk)] = code;
        sum += code;
      }
      r.scales[static_cast<size_t>(i * blocks + b)] = scale;
      offset += 128.0 * scale * sum;
    }
    r.offsets[static_cast<size_t>(i)] = static_cast<float>(offset);
  }
  return r;
}

}  // namespace

std::string KernelIsa() { return ActiveKernels().name; }

void MatMulT(const float* x, const float* w, float* y, int64_t m, int64_t n, int64_t k,
             const float* bias) {
  ActiveKernels().matmul_f32({x, k, m, w, k, n, nullptr, k, y, n});
  if (bias) {
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) y[i * n + j] += bias[j];
    }
  }
}

void MatMulT(const float* x, const WeightMatrix& w, float* y, int64_t m, const float* bias,
             ThreadPool* pool) {
  const int64_t n = w.rows(), k = w.cols();
  const KernelSet& ks = ActiveKernels();
  // With the dot-product instructions, the activations are rounded to the weights' format once,
  // before the threads split the weight rows.
  const bool pairs = w.format() == WeightStorage::kBf16 && ks.matmul_bf16_pairs != nullptr;
  const bool blocks = w.format() == WeightStorage::kInt8 && ks.matmul_int8_blocks != nullptr;
  const uint16_t* x_bf16 = pairs ? RoundToBf16(x, m, k) : nullptr;
  const RoundedRows* x_int8 = blocks ? &QuantizeRows(x, m, k) : nullptr;
  const int64_t ldxs = (k + kInt8Block - 1) / kInt8Block;
  SplitRows(n, pool, [&](int64_t begin, int64_t end) {
    const int64_t rows = end - begin;
    float* out = y + begin;
    if (pairs) {
      ks.matmul_bf16_pairs({x_bf16, k, m, w.bf16() + begin * k, k, rows, k, out, n});
    } else if (blocks) {
      ks.matmul_int8_blocks({x_int8->codes.data(), x_int8->scales.data(), x_int8->offsets.data(), k,
                             ldxs, m, w.int8() + begin * k, w.scales() + begin, k, rows, k, out,
                             n});
    } else {
      switch (w.format()) {
        case WeightStorage::kFp32:
          ks.matmul_f32({x, k, m, w.f32() + begin * k, k, rows, nullptr, k, out, n});
          break;
        case WeightStorage::kBf16:
          ks.matmul_bf16({x, k, m, w.bf16() + begin * k, k, rows, nullptr, k, out, n});
          break;
        case WeightStorage::kInt8:
          ks.matmul_int8({x, k, m, w.int8() + begin * k, k, rows, w.scales() + begin, k, out, n});
          break;
      }
    }
    if (bias) {
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = begin; j < end; ++j) y[i * n + j] += bias[j];
      }
    }
  });
}

void MatMulTStrided(const float* x, int64_t ldx, const float* w, int64_t ldw, float* y, int64_t ldy,
                    int64_t m, int64_t n, int64_t k) {
  ActiveKernels().matmul_f32({x, ldx, m, w, ldw, n, nullptr, k, y, ldy});
}

float Dot(const float* a, const float* b, int64_t n) { return ActiveKernels().dot(a, b, n); }

float ExpShifted(float* x, int64_t n, float shift) {
  return ActiveKernels().exp_shifted(x, n, shift);
}

void RmsNorm(const float* x, const float* weight, float* y, int64_t m, int64_t n, double eps) {
  for (int64_t i = 0; i < m; ++i) {
    const float* in = x + i * n;
    double ss = 0;
    for (int64_t j = 0; j < n; ++j) ss += static_cast<double>(in[j]) * in[j];
    const float scale = static_cast<float>(1.0 / std::sqrt(ss / static_cast<double>(n) + eps));
    for (int64_t j = 0; j < n; ++j) y[i * n + j] = in[j] * scale * weight[j];
  }
}

void Rope(float* v, int64_t heads, int64_t stride, int64_t dim, int64_t position,
          const double* inv_freq, double scale, bool interleaved) {
  const int64_t half = dim / 2;
  for (int64_t i = 0; i < half; ++i) {
    const double angle = static_cast<double>(position) * inv_freq[i];
    const float c = static_cast<float>(std::cos(angle) * scale);
    const float s = static_cast<float>(std::sin(angle) * scale);
    const int64_t ia = interleaved ? 2 * i : i, ib = interleaved ? 2 * i + 1 : i + half;
    for (int64_t h = 0; h < heads; ++h) {
      float* x = v + h * stride;
      const float a = x[ia];
      const float b = x[ib];
      x[ia] = a * c - b * s;
      x[ib] = b * c + a * s;
    }
  }
}

void SiluMul(float* gate, const float* up, int64_t n) { ActiveKernels().silu_mul(gate, up, n); }

void ClampedSwigluMul(float* gate, const float* up, int64_t n, float limit) {
  constexpr float kAlpha = 1.702f;  // gpt-oss's sigmoid sharpness
  for (int64_t i = 0; i < n; ++i) {
    const float g = std::min(gate[i], limit);
    const float u = std::clamp(up[i], -limit, limit);
    gate[i] = (u + 1.0f) * g / (1.0f + std::exp(-kAlpha * g));
  }
}

void Softmax(float* x, int64_t n) {
  const float top = *std::max_element(x, x + n);
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    x[i] = std::exp(x[i] - top);
    sum += x[i];
  }
  for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>(x[i] / sum);
}

}  // namespace shardwise::kernels
