// The CUDA kernels before attention (see attention_ops.h): GQA's per-head norms, RoPE and
// cache writes in one kernel per step, MLA's RoPE and latent-cache writes, and MLA's absorbed and
// expanded forms. Angles are computed in double, as the CPU's kernels::Rope does: positions up to
// 1e6 times a frequency need more than fp32's 24 bits.
#include <string>

#include "attention_ops.h"
#include "device_math.cuh"

namespace shardwise::cuda {
namespace {

constexpr size_t kDefaultSharedBytes = 48 * 1024;

// One warp normalises a head of `hd` values in place: x / rms(x) * w.
__device__ void NormHead(float* x, const float* w, int64_t hd, float eps, int lane) {
  float ss = 0;
  for (int64_t d = lane; d < hd; d += 32) ss += x[d] * x[d];
  const float scale = rsqrtf(WarpSum(ss) / static_cast<float>(hd) + eps);
  __syncwarp();
  for (int64_t d = lane; d < hd; d += 32) x[d] = x[d] * scale * w[d];
}

// cos and sin of position p times inv_freq[i], scaled by the attention factor (step.rope).
__device__ void Rotation(const StepView& step, int64_t p, int64_t i, float& c, float& s) {
  double sn, cs;
  sincos(static_cast<double>(p) * step.rope[1 + i], &sn, &cs);
  c = static_cast<float>(cs * step.rope[0]);
  s = static_cast<float>(sn * step.rope[0]);
}

// One block per row: the row's q (and, when stored, k) in shared memory, normed per head,
// rotated, then q to q_out and k, v to the caches.
__global__ void PrepareGqaKernel(const float* qkv, int64_t heads, int64_t kv_heads, int64_t hd,
                                 const float* q_norm, const float* k_norm, float eps, float* q_out,
                                 bf16* kc, bf16* vc, int64_t capacity, StepView step) {
  extern __shared__ float row[];  // [q | k]
  const int64_t r = blockIdx.x, si = r / step.len, t = r % step.len;
  const int64_t p = step.positions[t], slot = step.slots[t];
  const int64_t qw = heads * hd, kw = kv_heads * hd;
  const float* src = qkv + r * (qw + 2 * kw);
  const bool store = slot >= 0;
  for (int64_t i = threadIdx.x; i < (store ? qw + kw : qw); i += blockDim.x) row[i] = src[i];
  __syncthreads();
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = blockDim.x / 32;
  if (q_norm != nullptr) {
    for (int64_t hh = warp; hh < heads; hh += warps) NormHead(row + hh * hd, q_norm, hd, eps, lane);
  }
  if (store && k_norm != nullptr) {
    for (int64_t hh = warp; hh < kv_heads; hh += warps) {
      NormHead(row + qw + hh * hd, k_norm, hd, eps, lane);
    }
  }
  __syncthreads();
  const int64_t half = hd / 2, rotated = heads + (store ? kv_heads : 0);
  for (int64_t idx = threadIdx.x; idx < rotated * half; idx += blockDim.x) {
    const int64_t hh = idx / half, i = idx % half;
    float* x = row + hh * hd;  // k's heads follow q's
    float c, s;
    Rotation(step, p, i, c, s);
    const float a = x[i], b = x[i + half];
    x[i] = a * c - b * s;
    x[i + half] = b * c + a * s;
  }
  __syncthreads();
  for (int64_t i = threadIdx.x; i < qw; i += blockDim.x) q_out[r * qw + i] = row[i];
  if (!store) return;
  const int64_t at = (static_cast<int64_t>(step.seqs[si]) * capacity + slot) * kw;
  for (int64_t i = threadIdx.x; i < kw; i += blockDim.x) {
    kc[at + i] = __float2bfloat16(row[qw + i]);
    vc[at + i] = __float2bfloat16(src[qw + kw + i]);
  }
}

// One block per row: RoPE (interleaved pairs) on q's rotary parts in place; for a stored row,
// the cache entry [RmsNorm(latent) | rotated key].
__global__ void PrepareMlaKernel(float* q, const float* kv, const float* kv_norm, float eps,
                                 int64_t heads, int64_t nope, int64_t rd, int64_t lora, bf16* cache,
                                 int64_t capacity, StepView step) {
  __shared__ float scratch[32];
  const int64_t r = blockIdx.x, si = r / step.len, t = r % step.len;
  const int64_t p = step.positions[t], slot = step.slots[t];
  const int64_t qk = nope + rd, half = rd / 2, w = lora + rd;
  for (int64_t idx = threadIdx.x; idx < heads * half; idx += blockDim.x) {
    const int64_t hh = idx / half, i = idx % half;
    float* x = q + (r * heads + hh) * qk + nope;
    float c, s;
    Rotation(step, p, i, c, s);
    const float a = x[2 * i], b = x[2 * i + 1];
    x[2 * i] = a * c - b * s;
    x[2 * i + 1] = b * c + a * s;
  }
  if (slot < 0) return;  // the same for the whole block
  const float* src = kv + r * w;
  bf16* entry = cache + (static_cast<int64_t>(step.seqs[si]) * capacity + slot) * w;
  float ss = 0;
  for (int64_t c = threadIdx.x; c < lora; c += blockDim.x) ss += src[c] * src[c];
  const float scale = rsqrtf(BlockSum(ss, scratch) / static_cast<float>(lora) + eps);
  for (int64_t c = threadIdx.x; c < lora; c += blockDim.x) {
    entry[c] = __float2bfloat16(src[c] * scale * kv_norm[c]);
  }
  for (int64_t i = threadIdx.x; i < half; i += blockDim.x) {
    float c, s;
    Rotation(step, p, i, c, s);
    const float a = src[lora + 2 * i], b = src[lora + 2 * i + 1];
    entry[lora + 2 * i] = __float2bfloat16(a * c - b * s);
    entry[lora + 2 * i + 1] = __float2bfloat16(b * c + a * s);
  }
}

// One block per (row, head).
__global__ void AbsorbQueryKernel(const float* q, const bf16* kv_b, int64_t heads, int64_t nope,
                                  int64_t rd, int64_t lora, int64_t vd, float* qa) {
  const int64_t row = blockIdx.x, h = blockIdx.y, qk = nope + rd;
  const float* qh = q + (row * heads + h) * qk;
  const bf16* wk = kv_b + h * (nope + vd) * lora;  // rows: nope keys, then values
  float* out = qa + (row * heads + h) * (lora + rd);
  for (int64_t c = threadIdx.x; c < lora; c += blockDim.x) {
    float acc = 0;
    for (int64_t d = 0; d < nope; ++d) acc += qh[d] * __bfloat162float(wk[d * lora + c]);
    out[c] = acc;
  }
  for (int64_t i = threadIdx.x; i < rd; i += blockDim.x) out[lora + i] = qh[nope + i];
}

__global__ void LiftOutputKernel(const float* latent, const bf16* kv_b, int64_t heads, int64_t nope,
                                 int64_t lora, int64_t vd, bf16* out) {
  const int64_t row = blockIdx.x, h = blockIdx.y;
  const bf16* wv = kv_b + (h * (nope + vd) + nope) * lora;
  const float* o = latent + (row * heads + h) * lora;
  for (int64_t d = threadIdx.x; d < vd; d += blockDim.x) {
    float acc = 0;
    for (int64_t c = 0; c < lora; ++c) acc += __bfloat162float(wv[d * lora + c]) * o[c];
    out[(row * heads + h) * vd + d] = __float2bfloat16(acc);
  }
}

__device__ int64_t Block(const int32_t* seqs, int64_t b) {
  return seqs != nullptr ? static_cast<int64_t>(seqs[b]) : b;
}

__global__ void GatherLatentsKernel(const bf16* source, const int32_t* seqs, int64_t capacity,
                                    int64_t lora, int64_t rd, int64_t n, bf16* latents) {
  const int64_t idx = blockIdx.x, b = idx / n, j = idx % n;
  const bf16* src = source + (Block(seqs, b) * capacity + j) * (lora + rd);
  for (int64_t c = threadIdx.x; c < lora; c += blockDim.x) latents[idx * lora + c] = src[c];
}

__global__ void SplitExpandedKernel(const float* expanded, const bf16* source, const int32_t* seqs,
                                    int64_t capacity, int64_t heads, int64_t nope, int64_t rd,
                                    int64_t lora, int64_t vd, int64_t n, bf16* keys, bf16* values) {
  const int64_t idx = blockIdx.x, h = blockIdx.y, b = idx / n, j = idx % n, qk = nope + rd;
  const float* e = expanded + (idx * heads + h) * (nope + vd);
  const bf16* rope = source + (Block(seqs, b) * capacity + j) * (lora + rd) + lora;
  bf16* key = keys + (idx * heads + h) * qk;
  for (int64_t d = threadIdx.x; d < qk; d += blockDim.x) {
    key[d] = d < nope ? __float2bfloat16(e[d]) : rope[d - nope];
  }
  for (int64_t d = threadIdx.x; d < vd; d += blockDim.x) {
    values[(idx * heads + h) * vd + d] = __float2bfloat16(e[nope + d]);
  }
}

}  // namespace

Status PrepareGqa(const float* qkv, int64_t heads, int64_t kv_heads, int64_t head_dim,
                  const float* q_norm, const float* k_norm, float eps, float* q_out, bf16* k_cache,
                  bf16* v_cache, int64_t capacity, const StepView& step, cudaStream_t s) {
  const int64_t rows = step.sequences * step.len;
  if (rows == 0) return Status();
  const size_t shared = static_cast<size_t>((heads + kv_heads) * head_dim) * sizeof(float);
  if (shared > kDefaultSharedBytes) {
    SW_RETURN_IF_ERROR(CudaStatus(
        cudaFuncSetAttribute(PrepareGqaKernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             static_cast<int>(shared)),
        "cudaFuncSetAttribute (attention preparation's shared memory)"));
  }
  PrepareGqaKernel<<<static_cast<unsigned>(rows), kThreads, shared, s>>>(
      qkv, heads, kv_heads, head_dim, q_norm, k_norm, eps, q_out, k_cache, v_cache, capacity, step);
  return Launched("GQA norm, RoPE and KV-cache kernel");
}

Status PrepareMla(float* q, const float* kv, const float* kv_norm, float eps, int64_t heads,
                  int64_t nope, int64_t rope, int64_t kv_lora, bf16* cache, int64_t capacity,
                  const StepView& step, cudaStream_t s) {
  const int64_t rows = step.sequences * step.len;
  if (rows == 0) return Status();
  PrepareMlaKernel<<<static_cast<unsigned>(rows), kThreads, 0, s>>>(
      q, kv, kv_norm, eps, heads, nope, rope, kv_lora, cache, capacity, step);
  return Launched("MLA RoPE and latent-cache kernel");
}

Status MlaAbsorbQuery(const float* q, const bf16* kv_b, int64_t heads, int64_t nope, int64_t rope,
                      int64_t kv_lora, int64_t value_dim, float* qa, int64_t rows, cudaStream_t s) {
  if (rows == 0) return Status();
  const dim3 grid(static_cast<unsigned>(rows), static_cast<unsigned>(heads));
  AbsorbQueryKernel<<<grid, kThreads, 0, s>>>(q, kv_b, heads, nope, rope, kv_lora, value_dim, qa);
  return Launched("MLA query absorption kernel");
}

Status MlaLiftOutput(const float* o_latent, const bf16* kv_b, int64_t heads, int64_t nope,
                     int64_t kv_lora, int64_t value_dim, bf16* out, int64_t rows, cudaStream_t s) {
  if (rows == 0) return Status();
  const dim3 grid(static_cast<unsigned>(rows), static_cast<unsigned>(heads));
  LiftOutputKernel<<<grid, kThreads, 0, s>>>(o_latent, kv_b, heads, nope, kv_lora, value_dim, out);
  return Launched("MLA output kernel");
}

Status MlaGatherLatents(const bf16* source, const int32_t* seqs, int64_t capacity, int64_t kv_lora,
                        int64_t rope, int64_t sequences, int64_t n, bf16* latents, cudaStream_t s) {
  if (sequences * n == 0) return Status();
  GatherLatentsKernel<<<static_cast<unsigned>(sequences * n), kThreads, 0, s>>>(
      source, seqs, capacity, kv_lora, rope, n, latents);
  return Launched("MLA latent gather kernel");
}

Status MlaSplitExpanded(const float* expanded, const bf16* source, const int32_t* seqs,
                        int64_t capacity, int64_t heads, int64_t nope, int64_t rope,
                        int64_t kv_lora, int64_t value_dim, int64_t sequences, int64_t n,
                        bf16* keys, bf16* values, cudaStream_t s) {
  if (sequences * n == 0) return Status();
  const dim3 grid(static_cast<unsigned>(sequences * n), static_cast<unsigned>(heads));
  SplitExpandedKernel<<<grid, kThreads, 0, s>>>(expanded, source, seqs, capacity, heads, nope, rope,
                                                kv_lora, value_dim, n, keys, values);
  return Launched("MLA key and value kernel");
}

}  // namespace shardwise::cuda
