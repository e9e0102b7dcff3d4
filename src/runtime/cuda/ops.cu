// Element-wise, row and reduction kernels of the CUDA backend (see ops.h): one block per row, or
// one thread per element, fp32 arithmetic, block reductions through warp shuffles and shared
// memory.
#include <cfloat>
#include <climits>
#include <cmath>

#include "device_math.cuh"
#include "shardwise/runtime/cuda/ops.h"

namespace shardwise::cuda {
namespace {

__device__ float Load(const void* p, Elem t, int64_t i) {
  return t == Elem::kF32 ? static_cast<const float*>(p)[i]
                         : __bfloat162float(static_cast<const bf16*>(p)[i]);
}
__device__ void Store(void* p, Elem t, int64_t i, float v) {
  if (t == Elem::kF32) {
    static_cast<float*>(p)[i] = v;
  } else {
    static_cast<bf16*>(p)[i] = __float2bfloat16(v);
  }
}

__global__ void EmbedKernel(const bf16* table, const int32_t* tokens, float* x, int64_t h) {
  const int64_t r = blockIdx.x;
  const bf16* src = table + static_cast<int64_t>(tokens[r]) * h;
  for (int64_t j = threadIdx.x; j < h; j += blockDim.x) x[r * h + j] = __bfloat162float(src[j]);
}

// One block per row: optionally x += y, then out = x / rms(x) * w.
__global__ void RmsNormKernel(float* x, const float* y, const float* w, void* out, Elem out_type,
                              int64_t n, float eps) {
  __shared__ float scratch[32];
  float* in = x + blockIdx.x * n;
  float ss = 0;
  for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
    float v = in[j];
    if (y != nullptr) {
      v += y[blockIdx.x * n + j];
      in[j] = v;
    }
    ss += v * v;
  }
  ss = BlockSum(ss, scratch);
  const float scale = rsqrtf(ss / static_cast<float>(n) + eps);
  for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
    Store(out, out_type, blockIdx.x * n + j, in[j] * scale * w[j]);
  }
}

__global__ void AddKernel(float* x, const float* y, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) x[i] += y[i];
}

__global__ void ConvertKernel(const void* in, Elem in_type, void* out, Elem out_type, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) Store(out, out_type, i, Load(in, in_type, i));
}

__global__ void AddBiasKernel(float* y, const float* bias, int64_t n) {
  for (int64_t j = threadIdx.x; j < n; j += blockDim.x) y[blockIdx.x * n + j] += bias[j];
}

// gpt-oss's clamped SwiGLU (gpt-oss model card): (clamp(u) + 1) * g * sigmoid(1.702 g), g <= limit.
__global__ void SwiGluKernel(const float* gate_up, bf16* act, int64_t inter, float limit) {
  const float* g = gate_up + blockIdx.x * 2 * inter;
  const float* u = g + inter;
  for (int64_t j = threadIdx.x; j < inter; j += blockDim.x) {
    float v;
    if (limit > 0) {
      const float gc = fminf(g[j], limit), uc = fminf(fmaxf(u[j], -limit), limit);
      v = (uc + 1.0f) * gc / (1.0f + expf(-1.702f * gc));
    } else {
      v = g[j] / (1.0f + expf(-g[j])) * u[j];
    }
    act[blockIdx.x * inter + j] = __float2bfloat16(v);
  }
}

__global__ void GatherRowsKernel(const void* in, Elem type, const int32_t* index, void* out,
                                 int64_t width) {
  const int64_t src = static_cast<int64_t>(index[blockIdx.x]) * width;
  for (int64_t j = threadIdx.x; j < width; j += blockDim.x) {
    Store(out, type, blockIdx.x * width + j, Load(in, type, src + j));
  }
}

__global__ void ScatterAddRowsKernel(const float* in, const int32_t* index, const float* weight,
                                     float* out, int64_t width) {
  float* dst = out + static_cast<int64_t>(index[blockIdx.x]) * width;
  const float w = weight[blockIdx.x];
  for (int64_t j = threadIdx.x; j < width; j += blockDim.x)
    dst[j] += w * in[blockIdx.x * width + j];
}

__global__ void AddGatedRowsKernel(float* y, const float* shared, const float* x, const float* gate,
                                   int64_t width) {
  __shared__ float scratch[32];
  float g = 1.0f;
  if (gate != nullptr) {
    float dot = 0;
    for (int64_t j = threadIdx.x; j < width; j += blockDim.x)
      dot += x[blockIdx.x * width + j] * gate[j];
    dot = BlockSum(dot, scratch);
    g = 1.0f / (1.0f + expf(-dot));
  }
  for (int64_t j = threadIdx.x; j < width; j += blockDim.x) {
    y[blockIdx.x * width + j] += g * shared[blockIdx.x * width + j];
  }
}

// Merges b into a: the best two of both (ties: the lower index), the larger magnitude.
__device__ void Merge(DeviceLogitStat& a, const DeviceLogitStat& b) {
  const bool b_wins = b.best > a.best || (b.best == a.best && b.best_index < a.best_index);
  const float loser = b_wins ? a.best : b.best;
  if (b_wins) {
    a.best = b.best;
    a.best_index = b.best_index;
  }
  a.second = fmaxf(fmaxf(a.second, b.second), loser);
  a.max_abs = fmaxf(a.max_abs, b.max_abs);
  a.non_finite += b.non_finite;
}

constexpr int kStatThreads = 256;

__global__ void LogitStatsKernel(const float* logits, int64_t width, int64_t valid,
                                 DeviceLogitStat* out) {
  __shared__ DeviceLogitStat part[kStatThreads];
  const float* row = logits + blockIdx.x * width;
  DeviceLogitStat s{0, -INFINITY, -INFINITY, 0.0f, 0};
  for (int64_t i = threadIdx.x; i < valid; i += blockDim.x) {
    const float v = row[i];
    if (!isfinite(v)) {
      ++s.non_finite;
      continue;
    }
    s.max_abs = fmaxf(s.max_abs, fabsf(v));
    if (v > s.best) {
      s.second = s.best;
      s.best = v;
      s.best_index = i;
    } else if (v > s.second) {
      s.second = v;
    }
  }
  part[threadIdx.x] = s;
  __syncthreads();
  for (int half = kStatThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) Merge(part[threadIdx.x], part[threadIdx.x + half]);
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = part[0];
}

__global__ void FirstNonFiniteKernel(const float* x, int64_t n, unsigned long long* first) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n && !isfinite(x[i])) atomicMin(first, static_cast<unsigned long long>(i));
}

__global__ void FillUniformKernel(bf16* x, int64_t n, uint64_t seed, float scale, float offset) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  uint64_t z = seed * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(i);  // SplitMix64
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  const float u = static_cast<float>(z >> 40) * (1.0f / 16777216.0f);  // [0, 1)
  x[i] = __float2bfloat16(offset + scale * (2.0f * u - 1.0f));
}

unsigned Rows(int64_t rows) { return static_cast<unsigned>(rows); }

}  // namespace

Status Embed(const bf16* table, const int32_t* tokens, float* x, int64_t rows, int64_t h,
             cudaStream_t s) {
  if (rows == 0) return Status();
  EmbedKernel<<<Rows(rows), kThreads, 0, s>>>(table, tokens, x, h);
  return Launched("embedding kernel");
}

Status RmsNorm(const float* x, const float* w, void* y, Elem y_type, int64_t rows, int64_t n,
               float eps, cudaStream_t s) {
  if (rows == 0) return Status();
  RmsNormKernel<<<Rows(rows), kThreads, 0, s>>>(const_cast<float*>(x), nullptr, w, y, y_type, n,
                                                eps);
  return Launched("RMSNorm kernel");
}

Status AddRmsNorm(float* x, const float* y, const float* w, void* out, Elem out_type, int64_t rows,
                  int64_t n, float eps, cudaStream_t s) {
  if (rows == 0) return Status();
  RmsNormKernel<<<Rows(rows), kThreads, 0, s>>>(x, y, w, out, out_type, n, eps);
  return Launched("residual add and RMSNorm kernel");
}

Status Add(float* x, const float* y, int64_t n, cudaStream_t s) {
  if (n == 0) return Status();
  AddKernel<<<Blocks(n), kThreads, 0, s>>>(x, y, n);
  return Launched("add kernel");
}

Status Convert(const void* in, Elem in_type, void* out, Elem out_type, int64_t n, cudaStream_t s) {
  if (n == 0) return Status();
  ConvertKernel<<<Blocks(n), kThreads, 0, s>>>(in, in_type, out, out_type, n);
  return Launched("conversion kernel");
}

Status AddBias(float* y, const float* bias, int64_t rows, int64_t n, cudaStream_t s) {
  if (rows == 0) return Status();
  AddBiasKernel<<<Rows(rows), kThreads, 0, s>>>(y, bias, n);
  return Launched("bias kernel");
}

Status SwiGlu(const float* gate_up, bf16* act, int64_t rows, int64_t inter, float limit,
              cudaStream_t s) {
  if (rows == 0) return Status();
  SwiGluKernel<<<Rows(rows), kThreads, 0, s>>>(gate_up, act, inter, limit);
  return Launched("SwiGLU kernel");
}

Status GatherRows(const void* in, Elem type, const int32_t* index, void* out, int64_t n,
                  int64_t width, cudaStream_t s) {
  if (n == 0) return Status();
  GatherRowsKernel<<<Rows(n), kThreads, 0, s>>>(in, type, index, out, width);
  return Launched("gather kernel");
}

Status ScatterAddRows(const float* in, const int32_t* index, const float* weight, float* out,
                      int64_t n, int64_t width, cudaStream_t s) {
  if (n == 0) return Status();
  ScatterAddRowsKernel<<<Rows(n), kThreads, 0, s>>>(in, index, weight, out, width);
  return Launched("scatter-add kernel");
}

Status AddGatedRows(float* y, const float* shared, const float* x, const float* gate, int64_t rows,
                    int64_t width, cudaStream_t s) {
  if (rows == 0) return Status();
  AddGatedRowsKernel<<<Rows(rows), kThreads, 0, s>>>(y, shared, x, gate, width);
  return Launched("gated add kernel");
}

Status LogitStats(const float* logits, int64_t rows, int64_t width, int64_t valid,
                  DeviceLogitStat* out, cudaStream_t s) {
  if (rows == 0) return Status();
  LogitStatsKernel<<<Rows(rows), kStatThreads, 0, s>>>(logits, width, valid, out);
  return Launched("logit statistics kernel");
}

Status FirstNonFinite(const float* x, int64_t n, unsigned long long* first, cudaStream_t s) {
  if (n == 0) return Status();
  FirstNonFiniteKernel<<<Blocks(n), kThreads, 0, s>>>(x, n, first);
  return Launched("finite check kernel");
}

Status FillUniform(bf16* x, int64_t n, uint64_t seed, float scale, float offset, cudaStream_t s) {
  if (n == 0) return Status();
  FillUniformKernel<<<Blocks(n), kThreads, 0, s>>>(x, n, seed, scale, offset);
  return Launched("fill kernel");
}

}  // namespace shardwise::cuda
