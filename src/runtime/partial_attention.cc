#include "shardwise/runtime/partial_attention.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "shardwise/runtime/kernels.h"

namespace shardwise {
namespace {

constexpr float kNoScore = -std::numeric_limits<float>::infinity();

// Query rows whose scores are computed at once: a block's [rows x keys] scores stay in L2 for
// prompts of a few thousand tokens.
constexpr int64_t kRowBlock = 64;

// exp(a - b) with exp(-inf - anything) = 0 (a partial that saw no key).
float Rescale(float a, float b) { return a == kNoScore ? 0.0f : std::exp(a - b); }

}  // namespace

PartialView PartialView::Rows(int64_t first, int64_t count) const {
  const int64_t cells = first * heads;
  return {max + cells, sum + cells, out + cells * value_dim, count, heads, value_dim};
}

void PartialView::Reset() const {
  std::fill_n(max, rows * heads, kNoScore);
  std::fill_n(sum, rows * heads, 0.0f);
  std::fill_n(out, rows * heads * value_dim, 0.0f);
}

int64_t PartialFloats(int64_t rows, int64_t heads, int64_t value_dim) {
  return rows * heads * (2 + value_dim);
}

PartialView PartialOf(float* data, int64_t rows, int64_t heads, int64_t value_dim) {
  const int64_t cells = rows * heads;
  return {data, data + cells, data + 2 * cells, rows, heads, value_dim};
}

void AccumulateAttention(const QueryBlock& q, const KeyBlock& b, int64_t window, float scale,
                         const PartialView& s, ThreadPool* pool) {
  if (b.n == 0 || q.rows == 0) return;
  const int64_t vd = s.value_dim, n = b.n;
  auto head = [&](int h) {
    const int64_t g = q.kv_head[h];
    // Per thread, grown to the largest block seen: no allocation per token.
    thread_local std::vector<float> vt, scores, pv;
    vt.resize(std::max(vt.size(), static_cast<size_t>(vd * n)));
    scores.resize(std::max(scores.size(), static_cast<size_t>(kRowBlock * n)));
    pv.resize(std::max(pv.size(), static_cast<size_t>(kRowBlock * vd)));
    // Head g's values transposed, [vd x n]: P . V is then a product of k-contiguous rows.
    for (int64_t j = 0; j < n; ++j) {
      const float* v = b.values + j * b.value_stride + g * b.value_dim;
      for (int64_t d = 0; d < vd; ++d) vt[d * n + j] = v[d];
    }
    for (int64_t r0 = 0; r0 < q.rows; r0 += kRowBlock) {
      const int64_t rows = std::min(kRowBlock, q.rows - r0);
      // Keys past the last one any row of the block may see are left out of the products.
      const int64_t last = *std::max_element(q.positions + r0, q.positions + r0 + rows);
      int64_t used = 0;
      for (int64_t j = 0; j < n; ++j) {
        if (b.positions[j] <= last) used = j + 1;
      }
      if (used == 0) continue;
      kernels::MatMulTStrided(q.q + (r0 * q.heads + h) * q.dim, q.heads * q.dim, b.keys + g * q.dim,
                              b.key_stride, scores.data(), used, rows, used, q.dim);
      for (int64_t i = 0; i < rows; ++i) {
        const int64_t r = r0 + i, p = q.positions[r], cell = r * q.heads + h;
        float* row = scores.data() + i * used;
        float top = kNoScore;
        for (int64_t j = 0; j < used; ++j) {
          const int64_t kp = b.positions[j];
          const bool seen = kp <= p && (window <= 0 || kp > p - window);
          row[j] = seen ? row[j] * scale : kNoScore;
          top = std::max(top, row[j]);
        }
        if (top == kNoScore) {  // no key for this row: it adds nothing
          std::fill_n(row, used, 0.0f);
          continue;
        }
        const float m = std::max(s.max[cell], top);
        const float keep = Rescale(s.max[cell], m);
        float* o = s.out + cell * vd;
        for (int64_t d = 0; d < vd; ++d) o[d] *= keep;
        const float sum = kernels::ExpShifted(row, used, m);
        s.sum[cell] = s.sum[cell] * keep + sum;
        s.max[cell] = m;
      }
      kernels::MatMulTStrided(scores.data(), used, vt.data(), n, pv.data(), vd, rows, vd, used);
      for (int64_t i = 0; i < rows; ++i) {
        float* o = s.out + ((r0 + i) * q.heads + h) * vd;
        for (int64_t d = 0; d < vd; ++d) o[d] += pv[i * vd + d];
      }
    }
  };
  if (pool) {
    pool->Run(static_cast<int>(q.heads), head);
  } else {
    for (int h = 0; h < q.heads; ++h) head(h);
  }
}

void MergeAttention(const PartialView& s, const PartialView& other) {
  for (int64_t cell = 0; cell < s.rows * s.heads; ++cell) {
    const float m = std::max(s.max[cell], other.max[cell]);
    if (m == kNoScore) continue;
    const float a = Rescale(s.max[cell], m), b = Rescale(other.max[cell], m);
    float* o = s.out + cell * s.value_dim;
    const float* p = other.out + cell * s.value_dim;
    for (int64_t d = 0; d < s.value_dim; ++d) o[d] = o[d] * a + p[d] * b;
    s.sum[cell] = s.sum[cell] * a + other.sum[cell] * b;
    s.max[cell] = m;
  }
}

void FinishAttention(const PartialView& s, const float* sinks, float* out) {
  for (int64_t r = 0; r < s.rows; ++r) {
    for (int64_t h = 0; h < s.heads; ++h) {
      const int64_t cell = r * s.heads + h;
      const float m = s.max[cell];
      double factor = 1, denominator = s.sum[cell];
      if (sinks) {  // the sink may exceed every score: rescale to the larger of the two
        const float top = std::max(m, sinks[h]);
        factor = Rescale(m, top);
        denominator = denominator * factor + std::exp(static_cast<double>(sinks[h]) - top);
      }
      for (int64_t d = 0; d < s.value_dim; ++d) {
        const double o = s.out[cell * s.value_dim + d];
        out[cell * s.value_dim + d] =
            denominator > 0 ? static_cast<float>(o * factor / denominator) : 0.0f;
      }
    }
  }
}

Status RingPass(Communicator& cp, std::vector<float> block,
                const std::function<void(const std::vector<float>&)>& attend) {
  const int n = cp.size(), me = cp.rank();
  std::vector<float> incoming(block.size());
  attend(block);
  for (int hop = 1; hop < n; ++hop) {
    // Even ranks send first, odd ranks receive first: no cycle of blocking sends.
    const int next = (me + 1) % n, prev = (me + n - 1) % n;
    if (me % 2 == 0) {
      SW_RETURN_IF_ERROR(cp.Send(block, next));
      SW_RETURN_IF_ERROR(cp.Recv(incoming, prev));
    } else {
      SW_RETURN_IF_ERROR(cp.Recv(incoming, prev));
      SW_RETURN_IF_ERROR(cp.Send(block, next));
    }
    block.swap(incoming);
    attend(block);
  }
  return Status();
}

Status MergeAcrossRanks(Communicator& cp, std::span<float> data, int64_t rows, int64_t heads,
                        int64_t value_dim) {
  if (cp.size() == 1) return Status();
  const size_t each = data.size();
  std::vector<float> all(each * static_cast<size_t>(cp.size()));
  SW_RETURN_IF_ERROR(cp.AllGather(data, all));
  const PartialView merged = PartialOf(data.data(), rows, heads, value_dim);
  merged.Reset();
  for (int r = 0; r < cp.size(); ++r) {
    MergeAttention(merged, PartialOf(all.data() + r * each, rows, heads, value_dim));
  }
  return Status();
}

}  // namespace shardwise
