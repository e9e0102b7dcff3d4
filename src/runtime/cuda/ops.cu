// Plain CUDA kernels of the runtime's ops (see ops.h). Each is written for clarity: one block
// per row or per (row, head), fp32 arithmetic, block reductions through shared memory.
#include <algorithm>
#include <cfloat>
#include <string>

#include "shardwise/runtime/cuda/ops.h"

namespace shardwise::cuda {
namespace {

constexpr int kThreads = 256;
// Attention scores live in dynamic shared memory; Hopper allows up to 227 KiB per block
// (CUDA C++ Programming Guide, compute capability 9.0 table). We ask for 200 KiB.
constexpr int kAttentionSharedBytes = 200 * 1024;
constexpr int kAttentionThreads = 256;
constexpr int kAttentionWarps = kAttentionThreads / 32;
// The P.V accumulators: head_dim / 32 registers per lane.
constexpr int64_t kMaxAttentionHeadDim = 256;
// Decode splits each (row, head)'s keys over blocks until about this many blocks run (a few per
// SM of an H100's 132, so that enough loads are in flight), each taking at least this many keys.
constexpr int64_t kAttentionBlocks = 512;
constexpr int64_t kMinKeysPerSplit = 64;

int Blocks(int64_t n) { return static_cast<int>((n + kThreads - 1) / kThreads); }

Status Launched(const char* what) { return CudaStatus(cudaGetLastError(), what); }

// Sum (or max) over the block; every thread gets the result. `scratch` holds blockDim/32 floats.
template <bool kMax>
__device__ float BlockReduce(float v, float* scratch) {
  for (int o = 16; o > 0; o >>= 1) {
    const float other = __shfl_xor_sync(0xffffffffu, v, o);
    v = kMax ? fmaxf(v, other) : v + other;
  }
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = blockDim.x / 32;
  __syncthreads();  // scratch may still be read from a previous reduction
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  float r = kMax ? -FLT_MAX : 0.0f;
  for (int w = 0; w < warps; ++w) r = kMax ? fmaxf(r, scratch[w]) : r + scratch[w];
  return r;
}

__device__ float ToFloat(bf16 v) { return __bfloat162float(v); }
__device__ void Store(float* p, float v) { *p = v; }
__device__ void Store(bf16* p, float v) { *p = __float2bfloat16(v); }

__global__ void EmbedKernel(const bf16* table, const int32_t* tokens, float* x, int64_t h) {
  const int64_t r = blockIdx.x;
  const bf16* src = table + static_cast<int64_t>(tokens[r]) * h;
  for (int64_t j = threadIdx.x; j < h; j += blockDim.x) x[r * h + j] = __bfloat162float(src[j]);
}

template <typename Out>
__global__ void RmsNormKernel(const float* x, const bf16* w, Out* y, int64_t n, float eps) {
  __shared__ float scratch[32];
  const float* in = x + blockIdx.x * n;
  float ss = 0;
#pragma unroll 4
  for (int64_t j = threadIdx.x; j < n; j += blockDim.x) ss += in[j] * in[j];
  ss = BlockReduce<false>(ss, scratch);
  const float scale = rsqrtf(ss / static_cast<float>(n) + eps);
  for (int64_t j = threadIdx.x; j < n; j += blockDim.x)
    Store(y + blockIdx.x * n + j, in[j] * scale * ToFloat(w[j]));
}

__global__ void RopeKernel(float* v, int64_t heads, int64_t head_dim, int64_t len, int64_t pos0,
                           const float* inv_freq, float scale) {
  const int64_t r = blockIdx.x;
  const int64_t half = head_dim / 2;
  const float p = static_cast<float>(pos0 + r % len);
  for (int64_t idx = threadIdx.x; idx < heads * half; idx += blockDim.x) {
    const int64_t hh = idx / half, i = idx % half;
    // sincos in double: positions up to 1e6 times a frequency need more than fp32's 24 bits.
    double sn, cs;
    sincos(static_cast<double>(p) * static_cast<double>(inv_freq[i]), &sn, &cs);
    const float c = static_cast<float>(cs) * scale, s = static_cast<float>(sn) * scale;
    float* x = v + (r * heads + hh) * head_dim;
    const float a = x[i], b = x[i + half];
    x[i] = a * c - b * s;
    x[i + half] = b * c + a * s;
  }
}

__global__ void AppendKvKernel(const float* k, const float* v, bf16* kc, bf16* vc,
                               const int32_t* seqs, int64_t len, int64_t pos0, int64_t max_tokens,
                               int64_t width) {
  const int64_t r = blockIdx.x;
  const int64_t slot = (static_cast<int64_t>(seqs[r / len]) * max_tokens + pos0 + r % len) * width;
  for (int64_t j = threadIdx.x; j < width; j += blockDim.x) {
    kc[slot + j] = __float2bfloat16(k[r * width + j]);
    vc[slot + j] = __float2bfloat16(v[r * width + j]);
  }
}

// One block per (row, query head, key split). The query and the scores of the block's keys sit
// in dynamic shared memory, then each warp's partial P.V sums. Q.K: each warp takes one key at a
// time (lanes split the head dimension). P.V: warp w takes keys w, w + warps, ... and lane l
// accumulates dimensions l, l + 32, ... in registers; the warps' partials are summed at the
// end. With one split the block normalises and writes `out`; with several (decode, where rows x
// heads blocks alone are too few to keep HBM busy, as flash-decoding observes) each writes its
// unnormalised sums with its max and exp-sum to `partial`, and AttentionCombineKernel merges
// them. (On an H100, llama-3.1-8b decode at batch 1: 176 us per layer with one thread walking
// every key for P.V and no split, 80 us with P.V over warps, 22 us with the splits.)
__global__ void AttentionKernel(const float* q, const bf16* kc, const bf16* vc, const int32_t* seqs,
                                float* out, float* partial, AttentionShape sh) {
  extern __shared__ float smem[];
  __shared__ float scratch[32];
  const int64_t r = blockIdx.x, hh = blockIdx.y, split = blockIdx.z, splits = gridDim.z;
  const int64_t hd = sh.head_dim, kw = sh.kv_heads * hd;
  const int64_t p = sh.pos0 + r % sh.len;  // attends keys 0..p
  const int64_t chunk = (sh.pos0 + sh.len + splits - 1) / splits;
  const int64_t j0 = split * chunk, j1 = min(p + 1, j0 + chunk);  // this block's keys [j0, j1)
  const int64_t kvh = (sh.head_begin + hh) / sh.group - sh.kv_begin;
  const int64_t base = static_cast<int64_t>(seqs[r / sh.len]) * sh.max_tokens * kw + kvh * hd;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = blockDim.x / 32;
  float* qs = smem;              // [hd]
  float* scores = smem + hd;     // [chunk]
  float* sums = scores + chunk;  // [warps x hd]
  for (int64_t d = threadIdx.x; d < hd; d += blockDim.x)
    qs[d] = q[(r * sh.heads + hh) * hd + d] * sh.scale;
  __syncthreads();
  for (int64_t j = j0 + warp; j < j1; j += warps) {
    const bf16* key = kc + base + j * kw;
    float dot = 0;
    for (int64_t d = lane; d < hd; d += 32) dot += qs[d] * __bfloat162float(key[d]);
    for (int o = 16; o > 0; o >>= 1) dot += __shfl_xor_sync(0xffffffffu, dot, o);
    if (lane == 0) scores[j - j0] = dot;
  }
  __syncthreads();
  float top = -FLT_MAX;
  for (int64_t j = j0 + threadIdx.x; j < j1; j += blockDim.x) top = fmaxf(top, scores[j - j0]);
  top = BlockReduce<true>(top, scratch);
  float sum = 0;
  for (int64_t j = j0 + threadIdx.x; j < j1; j += blockDim.x) {
    scores[j - j0] = expf(scores[j - j0] - top);
    sum += scores[j - j0];
  }
  sum = BlockReduce<false>(sum, scratch);  // its __syncthreads also publishes the exps
  float acc[kMaxAttentionHeadDim / 32] = {};
  for (int64_t j = j0 + warp; j < j1; j += warps) {
    const float pj = scores[j - j0];
    const bf16* value = vc + base + j * kw;
#pragma unroll
    for (int i = 0; i < kMaxAttentionHeadDim / 32; ++i) {
      const int64_t d = lane + 32 * i;
      if (d < hd) acc[i] += pj * __bfloat162float(value[d]);
    }
  }
#pragma unroll
  for (int i = 0; i < kMaxAttentionHeadDim / 32; ++i) {
    const int64_t d = lane + 32 * i;
    if (d < hd) sums[warp * hd + d] = acc[i];
  }
  __syncthreads();
  const int64_t head_row = r * sh.heads + hh;
  // With splits: this block's [hd sums, max, exp-sum].
  float* part = splits > 1 ? partial + (head_row * splits + split) * (hd + 2) : nullptr;
  for (int64_t d = threadIdx.x; d < hd; d += blockDim.x) {
    float total = 0;
    for (int w = 0; w < warps; ++w) total += sums[w * hd + d];
    if (splits == 1) {
      out[head_row * hd + d] = total / sum;
    } else {
      part[d] = total;
    }
  }
  if (splits > 1 && threadIdx.x == 0) {
    part[hd] = top;  // -FLT_MAX and a zero exp-sum for a split past this row's last key
    part[hd + 1] = sum;
  }
}

// out = sum_s e^(max_s - M) sums_s / sum_s e^(max_s - M) expsum_s, M the largest max_s.
__global__ void AttentionCombineKernel(const float* partial, float* out, int64_t hd,
                                       int64_t splits) {
  const int64_t head_row = blockIdx.x;
  const float* parts = partial + head_row * splits * (hd + 2);
  float top = -FLT_MAX;
  for (int64_t s = 0; s < splits; ++s) top = fmaxf(top, parts[s * (hd + 2) + hd]);
  float denominator = 0;
  for (int64_t s = 0; s < splits; ++s)
    denominator += expf(parts[s * (hd + 2) + hd] - top) * parts[s * (hd + 2) + hd + 1];
  for (int64_t d = threadIdx.x; d < hd; d += blockDim.x) {
    float numerator = 0;
    for (int64_t s = 0; s < splits; ++s)
      numerator += expf(parts[s * (hd + 2) + hd] - top) * parts[s * (hd + 2) + d];
    out[head_row * hd + d] = numerator / denominator;
  }
}

__global__ void SiluMulKernel(const float* g, const float* u, bf16* out, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = __float2bfloat16(g[i] / (1.0f + expf(-g[i])) * u[i]);
}

__global__ void AddKernel(float* x, const float* y, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) x[i] += y[i];
}

__global__ void AddBiasKernel(float* y, const bf16* bias, int64_t n) {
  for (int64_t j = threadIdx.x; j < n; j += blockDim.x)
    y[blockIdx.x * n + j] += __bfloat162float(bias[j]);
}

__global__ void ToBf16Kernel(const float* x, bf16* y, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = __float2bfloat16(x[i]);
}

__global__ void SigmoidGateKernel(const bf16* h, const bf16* w, float* y, int64_t n) {
  __shared__ float scratch[32];
  float dot = 0;
  for (int64_t j = threadIdx.x; j < n; j += blockDim.x)
    dot += __bfloat162float(h[blockIdx.x * n + j]) * __bfloat162float(w[j]);
  dot = BlockReduce<false>(dot, scratch);
  if (threadIdx.x == 0) y[blockIdx.x] = 1.0f / (1.0f + expf(-dot));
}

__global__ void ScaleRowsKernel(float* x, const float* scale, int64_t n) {
  for (int64_t j = threadIdx.x; j < n; j += blockDim.x) x[blockIdx.x * n + j] *= scale[blockIdx.x];
}

// One thread per row: softmax, then k passes picking the largest unpicked expert.
__global__ void TopKKernel(const float* logits, int64_t rows, int64_t experts, int64_t k,
                           bool renorm, int32_t* ids, float* weights) {
  const int64_t r = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  const float* l = logits + r * experts;
  float top = -FLT_MAX;
  for (int64_t e = 0; e < experts; ++e) top = fmaxf(top, l[e]);
  float sum = 0;
  for (int64_t e = 0; e < experts; ++e) sum += expf(l[e] - top);
  float picked_sum = 0;
  for (int64_t j = 0; j < k; ++j) {
    int64_t best = -1;
    for (int64_t e = 0; e < experts; ++e) {
      bool taken = false;
      for (int64_t i = 0; i < j; ++i) taken = taken || ids[r * k + i] == e;
      if (!taken && (best < 0 || l[e] > l[best])) best = e;  // strict: ties keep the lower index
    }
    ids[r * k + j] = static_cast<int32_t>(best);
    weights[r * k + j] = expf(l[best] - top) / sum;
    picked_sum += weights[r * k + j];
  }
  if (renorm) {
    for (int64_t j = 0; j < k; ++j) weights[r * k + j] /= picked_sum;
  }
}

__global__ void GatherRowsKernel(const bf16* in, const int32_t* index, bf16* out, int64_t h) {
  const bf16* src = in + static_cast<int64_t>(index[blockIdx.x]) * h;
  for (int64_t j = threadIdx.x; j < h; j += blockDim.x) out[blockIdx.x * h + j] = src[j];
}

__global__ void ScatterAddRowsKernel(const float* y, const int32_t* index, const float* weight,
                                     float* out, int64_t h) {
  float* dst = out + static_cast<int64_t>(index[blockIdx.x]) * h;
  const float w = weight[blockIdx.x];
  for (int64_t j = threadIdx.x; j < h; j += blockDim.x) dst[j] += w * y[blockIdx.x * h + j];
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

}  // namespace

Status FillUniform(bf16* x, int64_t n, uint64_t seed, float scale, float offset, cudaStream_t s) {
  if (n == 0) return Status();
  FillUniformKernel<<<Blocks(n), kThreads, 0, s>>>(x, n, seed, scale, offset);
  return Launched("fill kernel");
}

Status Embed(const bf16* table, const int32_t* tokens, float* x, int64_t rows, int64_t h,
             cudaStream_t s) {
  if (rows == 0) return Status();
  EmbedKernel<<<static_cast<unsigned>(rows), kThreads, 0, s>>>(table, tokens, x, h);
  return Launched("embedding kernel");
}

Status RmsNorm(const float* x, const bf16* w, bf16* y, int64_t rows, int64_t n, double eps,
               cudaStream_t s) {
  if (rows == 0) return Status();
  RmsNormKernel<<<static_cast<unsigned>(rows), kThreads, 0, s>>>(x, w, y, n,
                                                                 static_cast<float>(eps));
  return Launched("RMSNorm kernel");
}

Status RmsNorm(const float* x, const bf16* w, float* y, int64_t rows, int64_t n, double eps,
               cudaStream_t s) {
  if (rows == 0) return Status();
  RmsNormKernel<<<static_cast<unsigned>(rows), kThreads, 0, s>>>(x, w, y, n,
                                                                 static_cast<float>(eps));
  return Launched("RMSNorm kernel");
}

Status Rope(float* v, int64_t rows, int64_t heads, int64_t head_dim, int64_t len, int64_t pos0,
            const float* inv_freq, float scale, cudaStream_t s) {
  if (rows == 0) return Status();
  RopeKernel<<<static_cast<unsigned>(rows), kThreads, 0, s>>>(v, heads, head_dim, len, pos0,
                                                              inv_freq, scale);
  return Launched("RoPE kernel");
}

Status AppendKv(const float* k, const float* v, bf16* k_cache, bf16* v_cache, const int32_t* seqs,
                int64_t rows, int64_t len, int64_t pos0, int64_t max_tokens, int64_t width,
                cudaStream_t s) {
  if (rows == 0) return Status();
  AppendKvKernel<<<static_cast<unsigned>(rows), kThreads, 0, s>>>(k, v, k_cache, v_cache, seqs, len,
                                                                  pos0, max_tokens, width);
  return Launched("KV-cache append kernel");
}

int64_t MaxAttentionKeys() {
  // Shared memory: the query, one score per key and each warp's partial sums, all fp32.
  return kAttentionSharedBytes / static_cast<int64_t>(sizeof(float)) -
         (1 + kAttentionWarps) * kMaxAttentionHeadDim;
}

int64_t AttentionSplits(const AttentionShape& sh) {
  const int64_t blocks = sh.rows * sh.heads, keys = sh.pos0 + sh.len;
  if (blocks == 0) return 1;
  const int64_t wanted = (kAttentionBlocks + blocks - 1) / blocks;
  const int64_t most = (keys + kMinKeysPerSplit - 1) / kMinKeysPerSplit;
  return std::max<int64_t>(1, std::min(wanted, most));
}

size_t AttentionWorkspaceFloats(const AttentionShape& sh) {
  const int64_t splits = AttentionSplits(sh);
  return splits == 1 ? 0 : static_cast<size_t>(sh.rows * sh.heads * splits * (sh.head_dim + 2));
}

Status Attention(const float* q, const bf16* k_cache, const bf16* v_cache, const int32_t* seqs,
                 float* out, float* workspace, const AttentionShape& sh, cudaStream_t s) {
  if (sh.rows == 0) return Status();
  if (sh.head_dim > kMaxAttentionHeadDim) {
    return Error("the CUDA attention kernel takes head_dim up to " +
                 std::to_string(kMaxAttentionHeadDim) + ", not " + std::to_string(sh.head_dim));
  }
  const int64_t keys = sh.pos0 + sh.len, splits = AttentionSplits(sh);
  const int64_t chunk = (keys + splits - 1) / splits;
  if (chunk > MaxAttentionKeys()) {
    return Error("the CUDA attention kernel holds at most " + std::to_string(MaxAttentionKeys()) +
                 " keys per sequence; shorten --prompt-len plus --gen (" + std::to_string(keys) +
                 ")");
  }
  if (splits > 1 && workspace == nullptr) {
    return Error("the split attention kernel needs AttentionWorkspaceFloats() of workspace");
  }
  const size_t shared =
      static_cast<size_t>(sh.head_dim * (1 + kAttentionWarps) + chunk) * sizeof(float);
  if (shared > 48 * 1024) {
    SW_RETURN_IF_ERROR(CudaStatus(
        cudaFuncSetAttribute(AttentionKernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             kAttentionSharedBytes),
        "cudaFuncSetAttribute (attention shared memory)"));
  }
  const dim3 grid(static_cast<unsigned>(sh.rows), static_cast<unsigned>(sh.heads),
                  static_cast<unsigned>(splits));
  AttentionKernel<<<grid, kAttentionThreads, shared, s>>>(q, k_cache, v_cache, seqs, out, workspace,
                                                          sh);
  SW_RETURN_IF_ERROR(Launched("attention kernel"));
  if (splits == 1) return Status();
  AttentionCombineKernel<<<static_cast<unsigned>(sh.rows * sh.heads), 128, 0, s>>>(
      workspace, out, sh.head_dim, splits);
  return Launched("attention combine kernel");
}

Status SiluMul(const float* gate, const float* up, bf16* out, int64_t n, cudaStream_t s) {
  if (n == 0) return Status();
  SiluMulKernel<<<Blocks(n), kThreads, 0, s>>>(gate, up, out, n);
  return Launched("SwiGLU kernel");
}

Status Add(float* x, const float* y, int64_t n, cudaStream_t s) {
  if (n == 0) return Status();
  AddKernel<<<Blocks(n), kThreads, 0, s>>>(x, y, n);
  return Launched("add kernel");
}

Status AddBias(float* y, const bf16* bias, int64_t rows, int64_t n, cudaStream_t s) {
  if (rows == 0) return Status();
  AddBiasKernel<<<static_cast<unsigned>(rows), kThreads, 0, s>>>(y, bias, n);
  return Launched("bias kernel");
}

Status ToBf16(const float* x, bf16* y, int64_t n, cudaStream_t s) {
  if (n == 0) return Status();
  ToBf16Kernel<<<Blocks(n), kThreads, 0, s>>>(x, y, n);
  return Launched("bf16 conversion kernel");
}

Status SigmoidGate(const bf16* h, const bf16* w, float* y, int64_t rows, int64_t n,
                   cudaStream_t s) {
  if (rows == 0) return Status();
  SigmoidGateKernel<<<static_cast<unsigned>(rows), kThreads, 0, s>>>(h, w, y, n);
  return Launched("shared-expert gate kernel");
}

Status ScaleRows(float* x, const float* scale, int64_t rows, int64_t n, cudaStream_t s) {
  if (rows == 0) return Status();
  ScaleRowsKernel<<<static_cast<unsigned>(rows), kThreads, 0, s>>>(x, scale, n);
  return Launched("row scaling kernel");
}

Status TopK(const float* logits, int64_t rows, int64_t experts, int64_t k, bool renormalise,
            int32_t* ids, float* weights, cudaStream_t s) {
  if (rows == 0) return Status();
  TopKKernel<<<Blocks(rows), kThreads, 0, s>>>(logits, rows, experts, k, renormalise, ids, weights);
  return Launched("router top-k kernel");
}

Status GatherRows(const bf16* in, const int32_t* index, bf16* out, int64_t n, int64_t h,
                  cudaStream_t s) {
  if (n == 0) return Status();
  GatherRowsKernel<<<static_cast<unsigned>(n), kThreads, 0, s>>>(in, index, out, h);
  return Launched("gather kernel");
}

Status ScatterAddRows(const float* y, const int32_t* index, const float* weight, float* out,
                      int64_t n, int64_t h, cudaStream_t s) {
  if (n == 0) return Status();
  ScatterAddRowsKernel<<<static_cast<unsigned>(n), kThreads, 0, s>>>(y, index, weight, out, h);
  return Launched("scatter-add kernel");
}

}  // namespace shardwise::cuda
