// The portable kernels (plain loops over 4-lane arrays, whatever the compiler makes of them at
// the baseline instruction set) and the choice of kernel set for this CPU.
#include "kernel_set.h"

#include <cmath>
#include <cstring>

#include "shardwise/runtime/weight_matrix.h"
#include "tiles.h"

namespace shardwise::kernels {
namespace {

struct Portable {
  static constexpr int kLanes = 4;
  struct Vec {
    float v[kLanes];
  };

  template <typename F>
  static Vec Map(F f) {
    Vec out;
    for (int i = 0; i < kLanes; ++i) out.v[i] = f(i);
    return out;
  }
  static Vec Zero() { return Set1(0.0f); }
  static Vec Set1(float x) {
    return Map([x](int) { return x; });
  }
  static Vec Load(const float* p) {
    return Map([p](int i) { return p[i]; });
  }
  static Vec Load(const uint16_t* p) {
    return Map([p](int i) { return FromBf16(p[i]); });
  }
  static Vec Load(const int8_t* p) {
    return Map([p](int i) { return static_cast<float>(p[i]); });
  }
  template <typename T>
  static Vec LoadTail(const T* p, int n) {
    T buf[kLanes] = {};
    std::memcpy(buf, p, static_cast<size_t>(n) * sizeof(T));
    return Load(buf);
  }
  static void Store(float* p, Vec v) { std::memcpy(p, v.v, sizeof(v.v)); }
  static void StoreTail(float* p, Vec v, int n) {
    std::memcpy(p, v.v, static_cast<size_t>(n) * sizeof(float));
  }
  static Vec Add(Vec a, Vec b) {
    return Map([&](int i) { return a.v[i] + b.v[i]; });
  }
  static Vec Sub(Vec a, Vec b) {
    return Map([&](int i) { return a.v[i] - b.v[i]; });
  }
  static Vec Mul(Vec a, Vec b) {
    return Map([&](int i) { return a.v[i] * b.v[i]; });
  }
  static Vec Div(Vec a, Vec b) {
    return Map([&](int i) { return a.v[i] / b.v[i]; });
  }
  static Vec Min(Vec a, Vec b) {
    return Map([&](int i) { return std::fmin(a.v[i], b.v[i]); });
  }
  static Vec Max(Vec a, Vec b) {
    return Map([&](int i) { return std::fmax(a.v[i], b.v[i]); });
  }
  static Vec Fma(Vec a, Vec b, Vec c) {
    return Map([&](int i) { return a.v[i] * b.v[i] + c.v[i]; });
  }
  static float Sum(Vec v) { return (v.v[0] + v.v[1]) + (v.v[2] + v.v[3]); }
  static Vec Round(Vec v) {
    return Map([&](int i) { return std::nearbyint(v.v[i]); });
  }
  static Vec Pow2Mul(Vec y, Vec n) {
    return Map([&](int i) { return std::ldexp(y.v[i], static_cast<int>(n.v[i])); });
  }
  static Vec ZeroBelow(Vec v, Vec x, Vec limit) {
    return Map([&](int i) { return x.v[i] < limit.v[i] ? 0.0f : v.v[i]; });
  }
};

constexpr int kRows = 2, kCols = 2, kDecodeCols = 4;

const KernelSet kPortable = {
    "portable",
    tiles::MatMul<Portable, kRows, kCols, kDecodeCols, float>,
    tiles::MatMul<Portable, kRows, kCols, kDecodeCols, uint16_t>,
    tiles::MatMul<Portable, kRows, kCols, kDecodeCols, int8_t>,
    tiles::Dot<Portable>,
    tiles::ExpShifted<Portable>,
    tiles::SiluMul<Portable>,
};

}  // namespace

const KernelSet& PortableKernels() { return kPortable; }

#if !defined(__x86_64__)
const KernelSet* Avx2Kernels() { return nullptr; }
const KernelSet* Avx512Kernels() { return nullptr; }
KernelSet Avx512DotKernels(const KernelSet& avx512) { return avx512; }
#endif

std::vector<const KernelSet*> SupportedKernelSets() {
  std::vector<const KernelSet*> sets;
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq")) {
    if (__builtin_cpu_supports("avx512bf16") && __builtin_cpu_supports("avx512vnni")) {
      static const KernelSet dot = Avx512DotKernels(*Avx512Kernels());
      sets.push_back(&dot);
    }
    sets.push_back(Avx512Kernels());
  }
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    sets.push_back(Avx2Kernels());
  }
#endif
  sets.push_back(&kPortable);
  return sets;
}

const KernelSet& ActiveKernels() {
  static const KernelSet* const best = SupportedKernelSets().front();
  return *best;
}

}  // namespace shardwise::kernels
