// The kernels for AVX-512 (F, BW, VL, DQ): 16 float lanes, masked loads for the ends of rows.
// CMake compiles this file alone with those instruction sets enabled; kernel_set.cc calls it only
// on a CPU that has them. It includes nothing but the intrinsics and the kernels' own headers
// (simd/tiles.h explains why).
#include "avx512_intrinsics.h"
#include "kernel_set.h"
#include "tiles.h"

namespace shardwise::kernels {
namespace {

struct Avx512 {
  using Vec = __m512;
  static constexpr int kLanes = 16;

  static __mmask16 Mask(int n) { return static_cast<__mmask16>((1u << n) - 1u); }
  static Vec Widen(__m256i bf16) {
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(bf16), 16));
  }
  static Vec Widen(__m128i int8) { return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(int8)); }

  static Vec Zero() { return _mm512_setzero_ps(); }
  static Vec Set1(float v) { return _mm512_set1_ps(v); }
  static Vec Load(const float* p) { return _mm512_loadu_ps(p); }
  static Vec Load(const uint16_t* p) {
    return Widen(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  static Vec Load(const int8_t* p) {
    return Widen(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  static Vec LoadTail(const float* p, int n) { return _mm512_maskz_loadu_ps(Mask(n), p); }
  static Vec LoadTail(const uint16_t* p, int n) {
    return Widen(_mm256_maskz_loadu_epi16(Mask(n), p));
  }
  static Vec LoadTail(const int8_t* p, int n) { return Widen(_mm_maskz_loadu_epi8(Mask(n), p)); }
  static void Store(float* p, Vec v) { _mm512_storeu_ps(p, v); }
  static void StoreTail(float* p, Vec v, int n) { _mm512_mask_storeu_ps(p, Mask(n), v); }
  static Vec Add(Vec a, Vec b) { return _mm512_add_ps(a, b); }
  static Vec Sub(Vec a, Vec b) { return _mm512_sub_ps(a, b); }
  static Vec Mul(Vec a, Vec b) { return _mm512_mul_ps(a, b); }
  static Vec Div(Vec a, Vec b) { return _mm512_div_ps(a, b); }
  static Vec Min(Vec a, Vec b) { return _mm512_min_ps(a, b); }
  static Vec Max(Vec a, Vec b) { return _mm512_max_ps(a, b); }
  static Vec Fma(Vec a, Vec b, Vec c) { return _mm512_fmadd_ps(a, b, c); }
  static float Sum(Vec v) { return _mm512_reduce_add_ps(v); }
  static Vec Round(Vec v) {
    return _mm512_roundscale_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  }
  static Vec Pow2Mul(Vec y, Vec n) { return _mm512_scalef_ps(y, n); }
  static Vec ZeroBelow(Vec v, Vec x, Vec limit) {
    return _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(x, limit, _CMP_NLT_UQ), v);
  }
};

// 4 x 4 tiles: 16 accumulators, 4 widened weight vectors and one input vector of the 32
// registers; one row of x against 8 rows of W in decode.
constexpr int kRows = 4, kCols = 4, kDecodeCols = 8;

const KernelSet kAvx512 = {
    "avx512",
    tiles::MatMul<Avx512, kRows, kCols, kDecodeCols, float>,
    tiles::MatMul<Avx512, kRows, kCols, kDecodeCols, uint16_t>,
    tiles::MatMul<Avx512, kRows, kCols, kDecodeCols, int8_t>,
    tiles::Dot<Avx512>,
    tiles::ExpShifted<Avx512>,
    tiles::SiluMul<Avx512>,
};

}  // namespace

const KernelSet* Avx512Kernels() { return &kAvx512; }

}  // namespace shardwise::kernels
