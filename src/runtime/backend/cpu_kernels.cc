// The CPU backend's memory, element-wise ops, products and reductions (attention is in
// cpu_attention.cc).
#include "cpu_kernels.h"

#include <algorithm>
#include <cmath>

#include "shardwise/runtime/kernels.h"

namespace shardwise {
namespace {

const CpuTensor& Cpu(const Tensor& t) { return static_cast<const CpuTensor&>(t); }
CpuTensor& Cpu(Tensor& t) { return static_cast<CpuTensor&>(t); }

const float* OrNull(const Tensor* t) { return t ? Data(*t).data() : nullptr; }

uint64_t SplitMix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace

const std::vector<float>& Data(const Tensor& t) { return Cpu(t).data; }
std::vector<float>& Data(Tensor& t) { return Cpu(t).data; }
const WeightMatrix& Matrix(const Tensor& t) { return Cpu(t).weights; }

StatusOr<TensorPtr> CpuKernels::Alloc(TensorKind kind, int64_t rows, int64_t cols) {
  return TensorPtr(std::make_unique<CpuTensor>(kind, rows, cols));
}

StatusOr<TensorPtr> CpuKernels::Weights(WeightMatrix matrix) {
  return TensorPtr(std::make_unique<CpuTensor>(std::move(matrix)));
}

StatusOr<TensorPtr> CpuKernels::Floats(std::vector<float> values, int64_t rows, int64_t cols) {
  SW_CHECK(static_cast<int64_t>(values.size()) == rows * cols, "Floats: wrong value count");
  return TensorPtr(std::make_unique<CpuTensor>(rows, cols, std::move(values)));
}

StatusOr<TensorPtr> CpuKernels::RandomWeights(int64_t rows, int64_t cols, uint64_t seed,
                                              float scale, float offset) {
  std::vector<float> values(static_cast<size_t>(rows * cols));
  for (size_t i = 0; i < values.size(); ++i) {
    const uint64_t z = SplitMix(seed * 0x9E3779B97F4A7C15ull + i);
    const float u = static_cast<float>(z >> 40) * (1.0f / 16777216.0f);  // [0, 1)
    values[i] = offset + scale * (2.0f * u - 1.0f);
  }
  return Weights(WeightMatrix::Make(std::move(values), rows, cols, WeightStorage::kFp32));
}

Status CpuKernels::Upload(std::span<const float> host, Tensor& t, int64_t offset) {
  std::vector<float>& d = Data(t);
  SW_CHECK(offset + static_cast<int64_t>(host.size()) <= static_cast<int64_t>(d.size()),
           "Upload past the tensor's end");
  std::copy(host.begin(), host.end(), d.begin() + offset);
  return Status();
}

Status CpuKernels::Download(const Tensor& t, std::span<float> host, int64_t offset) {
  const std::vector<float>& d = Data(t);
  SW_CHECK(offset + static_cast<int64_t>(host.size()) <= static_cast<int64_t>(d.size()),
           "Download past the tensor's end");
  std::copy_n(d.begin() + offset, host.size(), host.begin());
  return Status();
}

float* CpuKernels::HostData(const Tensor& t) {
  // The handle is const, the memory it owns is the caller's to use.
  return t.kind() == TensorKind::kWeight ? nullptr : const_cast<float*>(Data(t).data());
}

Status CpuKernels::BeginStep(const StepRows& step) {
  step_ = step;
  return Status();
}

Status CpuKernels::Embed(const Tensor& table, std::span<const int64_t> tokens, Tensor& out) {
  const WeightMatrix& w = Matrix(table);
  float* x = Data(out).data();
  for (size_t t = 0; t < tokens.size(); ++t) w.DecodeRow(tokens[t], x + t * w.cols());
  return Status();
}

Status CpuKernels::RmsNorm(const Tensor& x, const Tensor& w, Tensor& out, int64_t rows,
                           double eps) {
  kernels::RmsNorm(Data(x).data(), Data(w).data(), Data(out).data(), rows, w.size(), eps);
  return Status();
}

Status CpuKernels::Add(Tensor& x, const Tensor& y, int64_t n) {
  float* a = Data(x).data();
  const float* b = Data(y).data();
  for (int64_t i = 0; i < n; ++i) a[i] += b[i];
  return Status();
}

Status CpuKernels::Copy(const Tensor& in, Tensor& out, int64_t n) {
  std::copy_n(Data(in).data(), n, Data(out).data());
  return Status();
}

Status CpuKernels::Zero(Tensor& t, int64_t n) {
  std::fill_n(Data(t).data(), n, 0.0f);
  return Status();
}

Status CpuKernels::Gemm(const Tensor& x, const Tensor& w, const Tensor* bias, Tensor& y,
                        int64_t rows) {
  kernels::MatMulT(Data(x).data(), Matrix(w), Data(y).data(), rows, OrNull(bias), &pool_);
  return Status();
}

Status CpuKernels::FloatGemm(const Tensor& x, const Tensor& w, const Tensor* bias, Tensor& y,
                             int64_t rows) {
  kernels::MatMulT(Data(x).data(), Data(w).data(), Data(y).data(), rows, w.rows(), w.cols(),
                   OrNull(bias));
  return Status();
}

Status CpuKernels::SwiGlu(const Tensor& gate_up, Tensor& act, int64_t rows, int64_t inter,
                          float limit) {
  const float* gu = Data(gate_up).data();
  float* a = Data(act).data();
  for (int64_t r = 0; r < rows; ++r) {
    const float* g = gu + r * 2 * inter;
    float* out = a + r * inter;
    std::copy_n(g, inter, out);
    if (limit > 0) {
      kernels::ClampedSwigluMul(out, g + inter, inter, limit);
    } else {
      kernels::SiluMul(out, g + inter, inter);
    }
  }
  return Status();
}

Status CpuKernels::GatherRows(const Tensor& in, std::span<const int32_t> index, Tensor& out,
                              int64_t width) {
  const float* src = Data(in).data();
  float* dst = Data(out).data();
  for (size_t i = 0; i < index.size(); ++i) {
    std::copy_n(src + index[i] * width, width, dst + static_cast<int64_t>(i) * width);
  }
  return Status();
}

Status CpuKernels::ScatterAddRows(const Tensor& in, std::span<const int32_t> index,
                                  std::span<const float> weight, Tensor& out, int64_t width) {
  const float* src = Data(in).data();
  float* dst = Data(out).data();
  for (size_t i = 0; i < index.size(); ++i) {
    float* y = dst + index[i] * width;
    const float* r = src + static_cast<int64_t>(i) * width;
    for (int64_t d = 0; d < width; ++d) y[d] += weight[i] * r[d];
  }
  return Status();
}

Status CpuKernels::AddGatedRows(Tensor& y, const Tensor& s, const Tensor& x, const Tensor* gate,
                                int64_t rows, int64_t width) {
  float* out = Data(y).data();
  const float* shared = Data(s).data();
  const float* in = Data(x).data();
  for (int64_t t = 0; t < rows; ++t) {
    const float g =
        gate ? 1.0f / (1.0f + std::exp(-kernels::Dot(in + t * width, Data(*gate).data(), width)))
             : 1.0f;
    for (int64_t d = 0; d < width; ++d) out[t * width + d] += g * shared[t * width + d];
  }
  return Status();
}

Status CpuKernels::LogitStats(const Tensor& logits, int64_t rows, int64_t width, int64_t valid,
                              std::span<LogitStat> out) {
  const float* data = Data(logits).data();
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = data + r * width;
    LogitStat s;
    for (int64_t i = 0; i < valid; ++i) {
      const float v = row[i];
      if (!std::isfinite(v)) ++s.non_finite;
      s.max_abs = std::max(s.max_abs, std::fabs(v));
      s.Fold(v, i);
    }
    out[static_cast<size_t>(r)] = s;
  }
  return Status();
}

StatusOr<std::optional<std::pair<int64_t, float>>> CpuKernels::FirstNonFinite(const Tensor& x,
                                                                              int64_t n) {
  const float* d = Data(x).data();
  for (int64_t i = 0; i < n; ++i) {
    if (!std::isfinite(d[i])) return std::optional(std::pair{i, d[i]});
  }
  return std::optional<std::pair<int64_t, float>>();
}

}  // namespace shardwise
