#include "shardwise/runtime/kernels.h"

#include <algorithm>
#include <cmath>

namespace shardwise::kernels {

float Dot(const float* a, const float* b, int64_t n) {
  // Eight independent partial sums let the compiler use vector registers without reordering
  // a single sum (no -ffast-math).
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int j = 0; j < 8; ++j) acc[j] += a[i + j] * b[i + j];
  }
  float sum = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
  for (; i < n; ++i) sum += a[i] * b[i];
  return sum;
}

void MatMulT(const float* x, const float* w, float* y, int64_t m, int64_t n, int64_t k,
             const float* bias) {
  for (int64_t j = 0; j < n; ++j) {
    const float* row = w + j * k;
    const float b = bias ? bias[j] : 0.0f;
    for (int64_t i = 0; i < m; ++i) y[i * n + j] = Dot(x + i * k, row, k) + b;
  }
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

void SiluMul(float* gate, const float* up, int64_t n) {
  for (int64_t i = 0; i < n; ++i) gate[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
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
