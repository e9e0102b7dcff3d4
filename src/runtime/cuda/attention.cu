// Blockwise attention on the GPU (see attention_ops.h). One block per (row, query head, key
// split): the query, the split's scores and each warp's P.V sums sit in shared memory; Q.K takes
// one key per warp (lanes split the head dimension), P.V gives each warp every warps-th key and
// each lane the dimensions lane, lane + 32, ... in registers. Keys are split over blocks until
// about kTargetBlocks run, as flash-decoding does for decode, where rows x heads blocks alone
// leave HBM idle; a second kernel merges the splits (and a running partial result) by
// log-sum-exp, or finishes the softmax straight into the output. (On an H100, llama-3.1-8b
// decode at batch 1 took 176 us per layer with one thread walking every key for P.V and no
// split, 80 us with P.V over warps, 22 us with the splits.)
#include <algorithm>
#include <cmath>

#include "attention_ops.h"
#include "device_math.cuh"

namespace shardwise::cuda {
namespace {

constexpr int kAttentionThreads = 256;
constexpr int kAttentionWarps = kAttentionThreads / 32;
constexpr int64_t kMaxHeadDim = 256;    // P.V accumulators: kMaxHeadDim / 32 registers per lane
constexpr int64_t kTargetBlocks = 512;  // a few per SM of an H100's 132
constexpr int64_t kMinKeysPerSplit = 64;
constexpr int64_t kMaxKeysPerSplit = 8192;  // scores in shared memory: 32 KiB

int64_t Splits(const AttendArgs& a) {
  const int64_t blocks = a.rows * a.heads;
  if (blocks == 0 || a.max_keys == 0) return 1;
  const int64_t wanted = (kTargetBlocks + blocks - 1) / blocks;
  const int64_t most = (a.max_keys + kMinKeysPerSplit - 1) / kMinKeysPerSplit;
  const int64_t needed = (a.max_keys + kMaxKeysPerSplit - 1) / kMaxKeysPerSplit;
  return std::max(needed, std::max<int64_t>(1, std::min(wanted, most)));
}

// This split's [outputs (value_dim) | max | exp-sum] for one (row, head).
__global__ void AttendSplitKernel(AttendArgs a, int64_t chunk, float* work) {
  extern __shared__ float smem[];
  __shared__ float scratch[32];
  const int64_t r = blockIdx.x, h = blockIdx.y, split = blockIdx.z, splits = gridDim.z;
  const int64_t si = r / a.step.len, qp = a.step.positions[r % a.step.len];
  const int64_t n = *a.key_count;
  const int64_t j0 = split * chunk, j1 = min(n, j0 + chunk);
  const int64_t b = a.by_sequence ? static_cast<int64_t>(a.step.seqs[si]) : si;
  const int64_t g = a.kv_head != nullptr ? a.kv_head[h] : 0;
  const bf16* keys = a.keys + b * a.capacity * a.key_stride + g * a.dim;
  const bf16* values = a.values + b * a.capacity * a.value_stride + g * a.value_dim;
  const int64_t vd = a.value_dim;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = blockDim.x / 32;
  float* qs = smem;              // [dim]
  float* scores = qs + a.dim;    // [chunk]
  float* sums = scores + chunk;  // [warps x value_dim]
  for (int64_t d = threadIdx.x; d < a.dim; d += blockDim.x)
    qs[d] = a.q[(r * a.heads + h) * a.dim + d];
  __syncthreads();
  for (int64_t j = j0 + warp; j < j1; j += warps) {
    const int64_t kp = a.key_positions[j];
    const bool seen = kp <= qp && (a.window <= 0 || kp > qp - a.window);
    float dot = 0;
    if (seen) {
      const bf16* key = keys + j * a.key_stride;
      for (int64_t d = lane; d < a.dim; d += 32) dot += qs[d] * __bfloat162float(key[d]);
      dot = WarpSum(dot);
    }
    if (lane == 0) scores[j - j0] = seen ? dot * a.scale : -INFINITY;
  }
  __syncthreads();
  float top = -INFINITY;
  for (int64_t j = j0 + threadIdx.x; j < j1; j += blockDim.x) top = fmaxf(top, scores[j - j0]);
  top = BlockMax(top, scratch);
  float sum = 0;
  if (top != -INFINITY) {
    for (int64_t j = j0 + threadIdx.x; j < j1; j += blockDim.x) {
      scores[j - j0] = expf(scores[j - j0] - top);
      sum += scores[j - j0];
    }
  }
  sum = BlockSum(sum, scratch);  // its barrier also publishes the exps
  float acc[kMaxHeadDim / 32] = {};
  if (top != -INFINITY) {
    for (int64_t j = j0 + warp; j < j1; j += warps) {
      const float p = scores[j - j0];
      if (p == 0.0f) continue;
      const bf16* value = values + j * a.value_stride;
#pragma unroll
      for (int i = 0; i < kMaxHeadDim / 32; ++i) {
        const int64_t d = lane + 32 * i;
        if (d < vd) acc[i] += p * __bfloat162float(value[d]);
      }
    }
  }
#pragma unroll
  for (int i = 0; i < kMaxHeadDim / 32; ++i) {
    const int64_t d = lane + 32 * i;
    if (d < vd) sums[warp * vd + d] = acc[i];
  }
  __syncthreads();
  float* part = work + ((r * a.heads + h) * splits + split) * (vd + 2);
  for (int64_t d = threadIdx.x; d < vd; d += blockDim.x) {
    float total = 0;
    for (int w = 0; w < warps; ++w) total += sums[w * vd + d];
    part[d] = total;
  }
  if (threadIdx.x == 0) {
    part[vd] = top;
    part[vd + 1] = sum;
  }
}

__device__ float Weight(float m, float top) { return m == -INFINITY ? 0.0f : expf(m - top); }

// Merges a cell's splits (and, unless fresh, the running partial) by log-sum-exp. With `out`
// the softmax is finished there (sinks joining the denominator); otherwise the merged state is
// written back to `partial`. One block per (row, head) cell.
__global__ void CombineKernel(const float* work, int64_t splits, int64_t vd, int64_t heads,
                              int64_t cells, float* partial, bool fresh, const float* sinks,
                              void* out, Elem out_type) {
  const int64_t cell = blockIdx.x, h = cell % heads;
  const float* parts = work + cell * splits * (vd + 2);
  const bool keep = partial != nullptr && !fresh;
  const float old_max = keep ? partial[cell] : -INFINITY;
  const float old_sum = keep ? partial[cells + cell] : 0.0f;
  float top = old_max;
  for (int64_t s = 0; s < splits; ++s) top = fmaxf(top, parts[s * (vd + 2) + vd]);
  float total = Weight(old_max, top) * old_sum;
  for (int64_t s = 0; s < splits; ++s) {
    total += Weight(parts[s * (vd + 2) + vd], top) * parts[s * (vd + 2) + vd + 1];
  }
  float factor = 1.0f, denominator = total;
  if (out != nullptr && sinks != nullptr) {  // the sink may exceed every score
    const float peak = fmaxf(top, sinks[h]);
    factor = Weight(top, peak);
    denominator = total * factor + expf(sinks[h] - peak);
  }
  float* old_out = partial != nullptr ? partial + 2 * cells + cell * vd : nullptr;
  for (int64_t d = threadIdx.x; d < vd; d += blockDim.x) {
    float o = keep ? Weight(old_max, top) * old_out[d] : 0.0f;
    for (int64_t s = 0; s < splits; ++s) {
      o += Weight(parts[s * (vd + 2) + vd], top) * parts[s * (vd + 2) + d];
    }
    if (out != nullptr) {
      const float v = denominator > 0 ? o * factor / denominator : 0.0f;
      if (out_type == Elem::kF32) {
        static_cast<float*>(out)[cell * vd + d] = v;
      } else {
        static_cast<bf16*>(out)[cell * vd + d] = __float2bfloat16(v);
      }
    } else {
      old_out[d] = o;
    }
  }
  __syncthreads();  // every thread has read the old max and sum
  if (out == nullptr && threadIdx.x == 0) {
    partial[cell] = top;
    partial[cells + cell] = total;
  }
}

Status CheckShape(const AttendArgs& a) {
  if (a.dim > kMaxHeadDim || a.value_dim > kMaxHeadDim) {
    return Error("the CUDA attention kernel takes key and value heads up to " +
                 std::to_string(kMaxHeadDim) + " wide");
  }
  return Status();
}

Status LaunchSplits(const AttendArgs& a, float* workspace, cudaStream_t s) {
  const int64_t splits = Splits(a), chunk = (a.max_keys + splits - 1) / splits;
  const size_t shared =
      static_cast<size_t>(a.dim + chunk + kAttentionWarps * a.value_dim) * sizeof(float);
  const dim3 grid(static_cast<unsigned>(a.rows), static_cast<unsigned>(a.heads),
                  static_cast<unsigned>(splits));
  AttendSplitKernel<<<grid, kAttentionThreads, shared, s>>>(a, chunk, workspace);
  return Launched("attention kernel");
}

}  // namespace

int64_t MaxAttentionHeadDim() { return kMaxHeadDim; }

size_t AttendWorkspaceFloats(const AttendArgs& a) {
  return static_cast<size_t>(a.rows * a.heads * Splits(a) * (a.value_dim + 2));
}

Status Attend(const AttendArgs& a, float* partial, bool fresh, float* workspace, cudaStream_t s) {
  if (a.rows == 0) return Status();
  SW_RETURN_IF_ERROR(CheckShape(a));
  SW_RETURN_IF_ERROR(LaunchSplits(a, workspace, s));
  const int64_t cells = a.rows * a.heads;
  CombineKernel<<<static_cast<unsigned>(cells), 128, 0, s>>>(workspace, Splits(a), a.value_dim,
                                                             a.heads, cells, partial, fresh,
                                                             nullptr, nullptr, Elem::kF32);
  return Launched("attention combine kernel");
}

Status AttendAll(const AttendArgs& a, const float* sinks, void* out, Elem out_type,
                 float* workspace, cudaStream_t s) {
  if (a.rows == 0) return Status();
  SW_RETURN_IF_ERROR(CheckShape(a));
  SW_RETURN_IF_ERROR(LaunchSplits(a, workspace, s));
  const int64_t cells = a.rows * a.heads;
  CombineKernel<<<static_cast<unsigned>(cells), 128, 0, s>>>(
      workspace, Splits(a), a.value_dim, a.heads, cells, nullptr, true, sinks, out, out_type);
  return Launched("attention finish kernel");
}

Status FinishAttention(const float* partial, const float* sinks, int64_t rows, int64_t heads,
                       int64_t value_dim, void* out, Elem out_type, cudaStream_t s) {
  const int64_t cells = rows * heads;
  if (cells == 0) return Status();
  CombineKernel<<<static_cast<unsigned>(cells), 128, 0, s>>>(nullptr, 0, value_dim, heads, cells,
                                                             const_cast<float*>(partial), false,
                                                             sinks, out, out_type);
  return Launched("attention finish kernel");
}

}  // namespace shardwise::cuda
