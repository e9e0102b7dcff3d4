// The kernels' loops, written once over a vector type V and compiled by each instruction set's
// file (simd/*_kernels.cc) with its own V:
//   V::Vec, V::kLanes; Zero(), Set1(float), Load(p) and LoadTail(p, n) for float, bf16
//   (uint16_t) and int8 pointers (widened to float lanes; LoadTail reads n < kLanes values and
//   zero-fills), Store(p, v), StoreTail(p, v, n), Add, Sub, Mul, Div, Min, Max,
//   Fma(a, b, c) = a * b + c, Sum(v) (all lanes), Round(v) (to the nearest integer),
//   Pow2Mul(y, n) = y * 2^n for integral n in [-126, 127], ZeroBelow(v, x, limit) (v, with 0 in
//   the lanes where x < limit).
// Everything here is in an unnamed namespace, so each file's instantiations stay in that file,
// and it uses no standard-library templates: no function compiled for AVX-512 can become the
// copy that a file compiled for the baseline links against.
#pragma once

#include <cstdint>

#include "kernel_set.h"

namespace shardwise::kernels::tiles {
namespace {

// Rows of W held in L2 while every row of x passes over them: 256 KiB, half of the smallest
// per-core L2 of the x86-64 parts with AVX2 (Haswell to Raptor Lake: 256 KiB to 2 MiB; Zen: 512
// KiB to 1 MiB), so x's rows and the outputs have room beside them.
constexpr int64_t kWeightBlockBytes = 256 << 10;

inline int64_t Min(int64_t a, int64_t b) { return a < b ? a : b; }

// Decode streams each weight once, faster than the hardware prefetcher follows the tile's
// interleaved rows on some machines (a shared 2-core VM: 5.7 against 8.3-8.7 GB/s for int8 rows
// of 768 bytes): each load also asks for the byte this many tiles further on.
constexpr int64_t kPrefetchTiles = 2;

// y[MR x NR] = x[MR rows] . w[NR rows]: MR x NR accumulators of kLanes partial sums along k,
// each w vector widened once and used for all MR rows of x; `ahead` > 0: prefetch w that many
// values past each load.
template <class V, int MR, int NR, typename W>
inline void Tile(const float* x, int64_t ldx, const W* w, int64_t ldw, int64_t k,
                 const float* scales, float* y, int64_t ldy, int64_t ahead) {
  using Vec = typename V::Vec;
  Vec acc[MR][NR];
  for (int i = 0; i < MR; ++i) {
    for (int j = 0; j < NR; ++j) acc[i][j] = V::Zero();
  }
  int64_t kk = 0;
  for (; kk + V::kLanes <= k; kk += V::kLanes) {
    Vec b[NR];
    for (int j = 0; j < NR; ++j) b[j] = V::Load(w + j * ldw + kk);
    if (ahead > 0) {
      for (int j = 0; j < NR; ++j) __builtin_prefetch(w + j * ldw + kk + ahead);
    }
    for (int i = 0; i < MR; ++i) {
      const Vec a = V::Load(x + i * ldx + kk);
      for (int j = 0; j < NR; ++j) acc[i][j] = V::Fma(a, b[j], acc[i][j]);
    }
  }
  if (kk < k) {
    const int rest = static_cast<int>(k - kk);
    Vec b[NR];
    for (int j = 0; j < NR; ++j) b[j] = V::LoadTail(w + j * ldw + kk, rest);
    for (int i = 0; i < MR; ++i) {
      const Vec a = V::LoadTail(x + i * ldx + kk, rest);
      for (int j = 0; j < NR; ++j) acc[i][j] = V::Fma(a, b[j], acc[i][j]);
    }
  }
  for (int i = 0; i < MR; ++i) {
    for (int j = 0; j < NR; ++j) {
      const float sum = V::Sum(acc[i][j]);
      y[i * ldy + j] = scales ? sum * scales[j] : sum;
    }
  }
}

// The tile for an edge block of mr <= MR rows and nr <= NR columns.
template <class V, int MR, int NR, typename W>
inline void EdgeTile(int mr, int nr, const float* x, int64_t ldx, const W* w, int64_t ldw,
                     int64_t k, const float* scales, float* y, int64_t ldy, int64_t ahead = 0) {
  if constexpr (MR > 1) {
    if (mr < MR) return EdgeTile<V, MR - 1, NR>(mr, nr, x, ldx, w, ldw, k, scales, y, ldy, ahead);
  }
  if constexpr (NR > 1) {
    if (nr < NR) return EdgeTile<V, MR, NR - 1>(mr, nr, x, ldx, w, ldw, k, scales, y, ldy, ahead);
  }
  Tile<V, MR, NR>(x, ldx, w, ldw, k, scales, y, ldy, ahead);
}

// The whole product, in blocks of W rows that stay in L2 (kWeightBlockBytes) while all of x's
// rows pass over them MR at a time. A single row of x (decode) uses NR1 rows of W per tile:
// more independent streams and accumulators when nothing else is reused.
template <class V, int MR, int NR, int NR1, typename W>
void MatMul(const MatMulArgs<W>& a) {
  const int64_t per_row = a.k * static_cast<int64_t>(sizeof(W));
  const int64_t block = per_row > 0 ? kWeightBlockBytes / per_row / NR * NR : a.n;
  const int64_t nc = block > NR ? block : NR;
  for (int64_t j0 = 0; j0 < a.n; j0 += nc) {
    const int64_t j1 = Min(a.n, j0 + nc);
    if (a.m == 1) {
      for (int64_t j = j0; j < j1; j += NR1) {
        const int nr = static_cast<int>(Min(NR1, j1 - j));
        EdgeTile<V, 1, NR1>(1, nr, a.x, a.ldx, a.w + j * a.ldw, a.ldw, a.k,
                            a.scales ? a.scales + j : nullptr, a.y + j, a.ldy,
                            kPrefetchTiles * NR1 * a.ldw);
      }
      continue;
    }
    for (int64_t i = 0; i < a.m; i += MR) {
      const int mr = static_cast<int>(Min(MR, a.m - i));
      for (int64_t j = j0; j < j1; j += NR) {
        const int nr = static_cast<int>(Min(NR, j1 - j));
        EdgeTile<V, MR, NR>(mr, nr, a.x + i * a.ldx, a.ldx, a.w + j * a.ldw, a.ldw, a.k,
                            a.scales ? a.scales + j : nullptr, a.y + i * a.ldy + j, a.ldy);
      }
    }
  }
}

template <class V>
float Dot(const float* a, const float* b, int64_t n) {
  using Vec = typename V::Vec;
  Vec s0 = V::Zero(), s1 = V::Zero(), s2 = V::Zero(), s3 = V::Zero();
  int64_t i = 0;
  for (; i + 4 * V::kLanes <= n; i += 4 * V::kLanes) {
    s0 = V::Fma(V::Load(a + i), V::Load(b + i), s0);
    s1 = V::Fma(V::Load(a + i + V::kLanes), V::Load(b + i + V::kLanes), s1);
    s2 = V::Fma(V::Load(a + i + 2 * V::kLanes), V::Load(b + i + 2 * V::kLanes), s2);
    s3 = V::Fma(V::Load(a + i + 3 * V::kLanes), V::Load(b + i + 3 * V::kLanes), s3);
  }
  for (; i + V::kLanes <= n; i += V::kLanes) s0 = V::Fma(V::Load(a + i), V::Load(b + i), s0);
  if (i < n) {
    const int rest = static_cast<int>(n - i);
    s1 = V::Fma(V::LoadTail(a + i, rest), V::LoadTail(b + i, rest), s1);
  }
  return V::Sum(V::Add(V::Add(s0, s1), V::Add(s2, s3)));
}

// exp(x) as Cephes's expf (Stephen L. Moshier, Cephes Math Library, expf.c): x = n ln2 + r with
// |r| <= ln2 / 2 (ln2 split in two for an exact product), e^r from a degree-7 polynomial,
// then scaled by 2^n; about 1 ulp. The limits are ln of the largest and smallest normal floats
// as the SSE/AVX ports of Cephes clamp them (sse_mathfun.h, Julien Pommier): below the lower
// one the result is 0, above the upper one it saturates.
constexpr float kExpHigh = 88.3762626647949f;
constexpr float kExpLow = -87.3365447505531f;
constexpr float kLog2e = 1.44269504088896341f;
constexpr float kLn2High = 0.693359375f, kLn2Low = -2.12194440e-4f;
constexpr float kExpPoly[6] = {1.9875691500e-4f, 1.3981999507e-3f, 8.3334519073e-3f,
                               4.1665795894e-2f, 1.6666665459e-1f, 5.0000001201e-1f};

template <class V>
typename V::Vec Exp(typename V::Vec in) {
  using Vec = typename V::Vec;
  const Vec x0 = V::Max(V::Min(in, V::Set1(kExpHigh)), V::Set1(kExpLow));
  const Vec n = V::Round(V::Mul(x0, V::Set1(kLog2e)));
  Vec r = V::Sub(x0, V::Mul(n, V::Set1(kLn2High)));
  r = V::Sub(r, V::Mul(n, V::Set1(kLn2Low)));
  Vec p = V::Set1(kExpPoly[0]);
  for (int i = 1; i < 6; ++i) p = V::Fma(p, r, V::Set1(kExpPoly[i]));
  const Vec e = V::Add(V::Fma(p, V::Mul(r, r), r), V::Set1(1.0f));
  return V::ZeroBelow(V::Pow2Mul(e, n), in, V::Set1(kExpLow));
}

template <class V>
float ExpShifted(float* x, int64_t n, float shift) {
  using Vec = typename V::Vec;
  const Vec s = V::Set1(shift);
  Vec sum = V::Zero();
  int64_t i = 0;
  for (; i + V::kLanes <= n; i += V::kLanes) {
    const Vec e = Exp<V>(V::Sub(V::Load(x + i), s));
    V::Store(x + i, e);
    sum = V::Add(sum, e);
  }
  if (i < n) {
    const int rest = static_cast<int>(n - i);
    // The zero-filled lanes would add exp(-shift): count only the first `rest`.
    const Vec e = Exp<V>(V::Sub(V::LoadTail(x + i, rest), s));
    V::StoreTail(x + i, e, rest);
    sum = V::Add(sum, V::LoadTail(x + i, rest));
  }
  return V::Sum(sum);
}

template <class V>
void SiluMul(float* gate, const float* up, int64_t n) {
  using Vec = typename V::Vec;
  const Vec one = V::Set1(1.0f), zero = V::Zero();
  int64_t i = 0;
  auto silu_mul = [&](Vec g, Vec u) {
    return V::Mul(V::Div(g, V::Add(one, Exp<V>(V::Sub(zero, g)))), u);
  };
  for (; i + V::kLanes <= n; i += V::kLanes) {
    V::Store(gate + i, silu_mul(V::Load(gate + i), V::Load(up + i)));
  }
  if (i < n) {
    const int rest = static_cast<int>(n - i);
    V::StoreTail(gate + i, silu_mul(V::LoadTail(gate + i, rest), V::LoadTail(up + i, rest)), rest);
  }
}

}  // namespace
}  // namespace shardwise::kernels::tiles
