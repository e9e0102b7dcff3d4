// Products of weights with activations rounded to the weights' own format, for CPUs with
// AVX512-BF16 and AVX512-VNNI (Cooper Lake, Sapphire Rapids and later; Zen 4 and later): bf16
// pairs multiplied and added into fp32 lanes by one vdpbf16ps per 32 weights, and int8 blocks of
// 32 multiplied and summed exactly in int32 by one vpdpbusd per 64 weights, where the AVX-512
// set widens every weight to fp32 first (two or three instructions per 16 weights). llama.cpp's
// BF16 and Q8_0 dot products work the same way. CMake compiles this file alone with those
// instruction sets; kernel_set.cc calls it only on a CPU that has them. It includes nothing but
// the intrinsics and the kernels' own headers (simd/tiles.h explains why).
#include "avx512_intrinsics.h"
#include "kernel_set.h"

namespace shardwise::kernels {
namespace {

// Rows of w kept in L2 while every row of x passes over them, as tiles.h's kWeightBlockBytes.
constexpr int64_t kWeightBlockBytes = 256 << 10;

inline int64_t Min(int64_t a, int64_t b) { return a < b ? a : b; }

// bf16: y[MR x NR] over k, 32 values (16 pairs) per step.
template <int MR, int NR>
inline void TileBf16(const uint16_t* x, int64_t ldx, const uint16_t* w, int64_t ldw, int64_t k,
                     float* y, int64_t ldy, int64_t ahead) {
  __m512 acc[MR][NR];
  for (int i = 0; i < MR; ++i) {
    for (int j = 0; j < NR; ++j) acc[i][j] = _mm512_setzero_ps();
  }
  for (int64_t kk = 0; kk < k; kk += 32) {
    const __mmask32 mask = k - kk >= 32 ? ~0u : (1u << (k - kk)) - 1u;
    __m512bh b[NR];
    for (int j = 0; j < NR; ++j) b[j] = (__m512bh)_mm512_maskz_loadu_epi16(mask, w + j * ldw + kk);
    if (ahead > 0) {
      for (int j = 0; j < NR; ++j) __builtin_prefetch(w + j * ldw + kk + ahead);
    }
    for (int i = 0; i < MR; ++i) {
      const __m512bh a = (__m512bh)_mm512_maskz_loadu_epi16(mask, x + i * ldx + kk);
      for (int j = 0; j < NR; ++j) acc[i][j] = _mm512_dpbf16_ps(acc[i][j], a, b[j]);
    }
  }
  for (int i = 0; i < MR; ++i) {
    for (int j = 0; j < NR; ++j) y[i * ldy + j] = _mm512_reduce_add_ps(acc[i][j]);
  }
}

// int8: y[MR x NR] over k, 64 values (two blocks of 32, each with its activation scale) per
// step. vpdpbusd multiplies unsigned by signed bytes, so the weights go in as w + 128 (their
// sign bit flipped) and 128 x (the blocks' scaled activation sums) comes off at the end.
template <int MR, int NR>
inline void TileInt8(const Int8Args& a, int64_t i0, int64_t j0, int64_t ahead) {
  __m512 acc[MR][NR];
  for (int i = 0; i < MR; ++i) {
    for (int j = 0; j < NR; ++j) acc[i][j] = _mm512_setzero_ps();
  }
  const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));
  for (int64_t kk = 0; kk < a.k; kk += 64) {
    const int64_t rest = a.k - kk;
    const __mmask64 mask = rest >= 64 ? ~0ull : (1ull << rest) - 1ull;
    __m512i b[NR];
    for (int j = 0; j < NR; ++j) {
      b[j] = _mm512_xor_si512(_mm512_maskz_loadu_epi8(mask, a.w + (j0 + j) * a.ldw + kk), flip);
    }
    if (ahead > 0) {
      for (int j = 0; j < NR; ++j) __builtin_prefetch(a.w + (j0 + j) * a.ldw + kk + ahead);
    }
    for (int i = 0; i < MR; ++i) {
      const __m512i x = _mm512_maskz_loadu_epi8(mask, a.x + (i0 + i) * a.ldx + kk);
      const float* s = a.x_scales + (i0 + i) * a.ldxs + kk / 32;
      const __m512 scale = _mm512_insertf32x8(_mm512_castps256_ps512(_mm256_set1_ps(s[0])),
                                              _mm256_set1_ps(rest > 32 ? s[1] : 0.0f), 1);
      for (int j = 0; j < NR; ++j) {
        const __m512i dot = _mm512_dpbusd_epi32(_mm512_setzero_si512(), b[j], x);
        acc[i][j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), scale, acc[i][j]);
      }
    }
  }
  for (int i = 0; i < MR; ++i) {
    for (int j = 0; j < NR; ++j) {
      const float sum = _mm512_reduce_add_ps(acc[i][j]) - a.x_offsets[i0 + i];
      a.y[(i0 + i) * a.ldy + j0 + j] = sum * a.w_scales[j0 + j];
    }
  }
}

// The tiles as types, so one edge template serves both.
template <int MR, int NR>
struct Bf16Tile {
  static void Run(const Bf16Args& a, int64_t i, int64_t j, int64_t ahead) {
    TileBf16<MR, NR>(a.x + i * a.ldx, a.ldx, a.w + j * a.ldw, a.ldw, a.k, a.y + i * a.ldy + j,
                     a.ldy, ahead);
  }
};
template <int MR, int NR>
struct Int8Tile {
  static void Run(const Int8Args& a, int64_t i, int64_t j, int64_t ahead) {
    TileInt8<MR, NR>(a, i, j, ahead);
  }
};

// The edge tile of mr <= MR rows and nr <= NR columns.
template <template <int, int> class Tile, int MR, int NR, typename Args>
inline void Edge(int mr, int nr, const Args& a, int64_t i, int64_t j, int64_t ahead = 0) {
  if constexpr (MR > 1) {
    if (mr < MR) return Edge<Tile, MR - 1, NR>(mr, nr, a, i, j, ahead);
  }
  if constexpr (NR > 1) {
    if (nr < NR) return Edge<Tile, MR, NR - 1>(mr, nr, a, i, j, ahead);
  }
  Tile<MR, NR>::Run(a, i, j, ahead);
}

// Decode's prefetch distance in weights: this many tiles of 8 rows on (tiles.h explains).
constexpr int64_t kPrefetchTiles = 2;

// The whole product in blocks of weight rows that stay in L2, 4 x 4 tiles (decode: 1 x 8).
template <typename Args, typename Tile, typename Decode>
void Blocked(const Args& a, int64_t weight_bytes, Tile tile, Decode decode) {
  constexpr int kRows = 4, kCols = 4, kDecodeCols = 8;
  const int64_t per_row = a.k * weight_bytes;
  const int64_t block = per_row > 0 ? kWeightBlockBytes / per_row / kCols * kCols : a.n;
  const int64_t nc = block > kCols ? block : kCols;
  for (int64_t j0 = 0; j0 < a.n; j0 += nc) {
    const int64_t j1 = Min(a.n, j0 + nc);
    if (a.m == 1) {
      for (int64_t j = j0; j < j1; j += kDecodeCols)
        decode(static_cast<int>(Min(kDecodeCols, j1 - j)), j);
      continue;
    }
    for (int64_t i = 0; i < a.m; i += kRows) {
      for (int64_t j = j0; j < j1; j += kCols) {
        tile(static_cast<int>(Min(kRows, a.m - i)), static_cast<int>(Min(kCols, j1 - j)), i, j);
      }
    }
  }
}

void MatMulBf16(const Bf16Args& a) {
  Blocked(
      a, 2, [&](int mr, int nr, int64_t i, int64_t j) { Edge<Bf16Tile, 4, 4>(mr, nr, a, i, j); },
      [&](int nr, int64_t j) { Edge<Bf16Tile, 1, 8>(1, nr, a, 0, j, kPrefetchTiles * 8 * a.ldw); });
}

void MatMulInt8(const Int8Args& a) {
  Blocked(
      a, 1, [&](int mr, int nr, int64_t i, int64_t j) { Edge<Int8Tile, 4, 4>(mr, nr, a, i, j); },
      [&](int nr, int64_t j) { Edge<Int8Tile, 1, 8>(1, nr, a, 0, j, kPrefetchTiles * 8 * a.ldw); });
}

}  // namespace

KernelSet Avx512DotKernels(const KernelSet& avx512) {
  KernelSet set = avx512;
  set.name = "avx512-bf16-vnni";
  set.matmul_bf16_pairs = MatMulBf16;
  set.matmul_int8_blocks = MatMulInt8;
  return set;
}

}  // namespace shardwise::kernels
