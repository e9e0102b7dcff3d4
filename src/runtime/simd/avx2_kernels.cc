// The kernels for AVX2 with FMA (Haswell and Zen onwards): 8 float lanes, 16 registers. CMake
// compiles this file alone with AVX2, FMA and F16C enabled; kernel_set.cc calls it only on a CPU
// that has them. It includes nothing but the intrinsics and the kernels' own headers
// (simd/tiles.h explains why).
#include <immintrin.h>

#include "kernel_set.h"
#include "tiles.h"

namespace shardwise::kernels {
namespace {

struct Avx2 {
  using Vec = __m256;
  static constexpr int kLanes = 8;

  static __m256i Mask(int n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  static Vec Widen(__m128i bf16) {
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(bf16), 16));
  }
  static Vec WidenInt8(__m128i int8) { return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(int8)); }

  static Vec Zero() { return _mm256_setzero_ps(); }
  static Vec Set1(float v) { return _mm256_set1_ps(v); }
  static Vec Load(const float* p) { return _mm256_loadu_ps(p); }
  static Vec Load(const uint16_t* p) {
    return Widen(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  static Vec Load(const int8_t* p) {
    return WidenInt8(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
  }
  static Vec LoadTail(const float* p, int n) { return _mm256_maskload_ps(p, Mask(n)); }
  // AVX2 has no masked 8- or 16-bit loads: the row's last values go through a zeroed buffer.
  static Vec LoadTail(const uint16_t* p, int n) {
    alignas(16) uint16_t buf[kLanes] = {};
    for (int i = 0; i < n; ++i) buf[i] = p[i];
    return Load(buf);
  }
  static Vec LoadTail(const int8_t* p, int n) {
    alignas(16) int8_t buf[2 * kLanes] = {};
    for (int i = 0; i < n; ++i) buf[i] = p[i];
    return Load(buf);
  }
  static void Store(float* p, Vec v) { _mm256_storeu_ps(p, v); }
  static void StoreTail(float* p, Vec v, int n) { _mm256_maskstore_ps(p, Mask(n), v); }
  static Vec Add(Vec a, Vec b) { return _mm256_add_ps(a, b); }
  static Vec Sub(Vec a, Vec b) { return _mm256_sub_ps(a, b); }
  static Vec Mul(Vec a, Vec b) { return _mm256_mul_ps(a, b); }
  static Vec Div(Vec a, Vec b) { return _mm256_div_ps(a, b); }
  static Vec Min(Vec a, Vec b) { return _mm256_min_ps(a, b); }
  static Vec Max(Vec a, Vec b) { return _mm256_max_ps(a, b); }
  static Vec Fma(Vec a, Vec b, Vec c) { return _mm256_fmadd_ps(a, b, c); }
  static float Sum(Vec v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
  }
  static Vec Round(Vec v) {
    return _mm256_round_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  }
  static Vec Pow2Mul(Vec y, Vec n) {
    const __m256i exponent = _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127));
    return _mm256_mul_ps(y, _mm256_castsi256_ps(_mm256_slli_epi32(exponent, 23)));
  }
  static Vec ZeroBelow(Vec v, Vec x, Vec limit) {
    return _mm256_and_ps(v, _mm256_cmp_ps(x, limit, _CMP_NLT_UQ));
  }
};

// 3 x 3 tiles: 9 accumulators, 3 widened weight vectors and one input vector of the 16
// registers; one row of x against 4 rows of W in decode.
constexpr int kRows = 3, kCols = 3, kDecodeCols = 4;

const KernelSet kAvx2 = {
    "avx2",
    tiles::MatMul<Avx2, kRows, kCols, kDecodeCols, float>,
    tiles::MatMul<Avx2, kRows, kCols, kDecodeCols, uint16_t>,
    tiles::MatMul<Avx2, kRows, kCols, kDecodeCols, int8_t>,
    tiles::Dot<Avx2>,
    tiles::ExpShifted<Avx2>,
    tiles::SiluMul<Avx2>,
};

}  // namespace

const KernelSet* Avx2Kernels() { return &kAvx2; }

}  // namespace shardwise::kernels
