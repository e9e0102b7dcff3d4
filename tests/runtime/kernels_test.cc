// Every CPU kernel set this machine can run (AVX-512, AVX2+FMA, portable) against plain scalar
// double-precision loops written here, on shapes that leave partial register tiles and row ends
// shorter than a vector. Error bounds:
//  - fp32 accumulation: a k-term dot product summed in any order in fp32, with or without FMA,
//    is within gamma_k = k u / (1 - k u) of sum |x_i w_i| (u = 2^-24; Higham, "Accuracy and
//    Stability of Numerical Algorithms", 2nd ed., section 3.1); we allow (k + 2) u, the two
//    extra for the final lane reduction's depth beyond k and an int8 row scale's product.
//  - bf16 storage (8 significant bits): round to nearest moves each weight by at most 2^-9 of
//    its magnitude, so against the fp32 weights the product may move by 2^-9 sum |x_i w_i| more.
//  - int8 storage with per-row scale s = max |w_row| / 127: round to nearest moves each weight
//    by at most s / 2, so the product may move by (s / 2) sum |x_i| more.
#include "shardwise/runtime/kernels.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <random>
#include <vector>

#include "shardwise/runtime/thread_pool.h"
#include "shardwise/runtime/weight_matrix.h"
#include "shardwise/runtime/weights.h"
#include "simd/kernel_set.h"

namespace shardwise {
namespace {

constexpr double kU = 1.0 / (1 << 24);  // fp32 unit roundoff
constexpr double kBf16U = 1.0 / (1 << 9);

std::vector<float> Random(size_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> u(-scale, scale);
  std::vector<float> v(n);
  for (float& x : v) x = u(gen);
  return v;
}

struct Shape {
  int64_t m, n, k;
};
// Full tiles, partial tiles in both directions, rows shorter than one vector, a single row.
const std::vector<Shape> kShapes = {{1, 1, 1},     {1, 37, 19},  {1, 64, 768}, {3, 5, 7},
                                    {4, 8, 16},    {5, 9, 33},   {7, 13, 100}, {12, 40, 64},
                                    {17, 70, 129}, {64, 96, 256}};

// y[i][j] = sum x[i][kk] w[j][kk] in double, and sum |x w| for the bound.
void Reference(const std::vector<float>& x, const std::vector<float>& w, const Shape& s,
               std::vector<double>& y, std::vector<double>& abs_sum) {
  y.assign(static_cast<size_t>(s.m * s.n), 0.0);
  abs_sum.assign(y.size(), 0.0);
  for (int64_t i = 0; i < s.m; ++i) {
    for (int64_t j = 0; j < s.n; ++j) {
      for (int64_t kk = 0; kk < s.k; ++kk) {
        const double p = static_cast<double>(x[i * s.k + kk]) * w[j * s.k + kk];
        y[i * s.n + j] += p;
        abs_sum[i * s.n + j] += std::fabs(p);
      }
    }
  }
}

TEST(Kernels, EverySetIsFoundAndThePortableOneIsLast) {
  const std::vector<const kernels::KernelSet*> sets = kernels::SupportedKernelSets();
  ASSERT_FALSE(sets.empty());
  EXPECT_EQ(sets.back(), &kernels::PortableKernels());
  EXPECT_EQ(kernels::KernelIsa(), sets.front()->name);
}

TEST(Kernels, MatMulFp32MatchesScalarDouble) {
  for (const kernels::KernelSet* ks : kernels::SupportedKernelSets()) {
    for (const Shape& s : kShapes) {
      const auto x = Random(static_cast<size_t>(s.m * s.k), 1);
      const auto w = Random(static_cast<size_t>(s.n * s.k), 2);
      std::vector<double> ref, abs_sum;
      Reference(x, w, s, ref, abs_sum);
      // Leading dimensions wider than k: the kernels must honour the strides.
      const int64_t ldx = s.k + 3, ldw = s.k + 5, ldy = s.n + 2;
      std::vector<float> xs(static_cast<size_t>(s.m * ldx), 7.0f), ws(s.n * ldw, 7.0f);
      for (int64_t i = 0; i < s.m; ++i) std::copy_n(&x[i * s.k], s.k, &xs[i * ldx]);
      for (int64_t j = 0; j < s.n; ++j) std::copy_n(&w[j * s.k], s.k, &ws[j * ldw]);
      std::vector<float> y(static_cast<size_t>(s.m * ldy), -1.0f);
      ks->matmul_f32({xs.data(), ldx, s.m, ws.data(), ldw, s.n, nullptr, s.k, y.data(), ldy});
      const double bound = static_cast<double>(s.k + 2) * kU;
      for (int64_t i = 0; i < s.m; ++i) {
        for (int64_t j = 0; j < s.n; ++j) {
          EXPECT_LE(std::fabs(y[i * ldy + j] - ref[i * s.n + j]), bound * abs_sum[i * s.n + j])
              << ks->name << " m" << s.m << " n" << s.n << " k" << s.k << " at " << i << "," << j;
        }
        EXPECT_EQ(y[i * ldy + s.n], -1.0f) << ks->name << ": wrote past the row";
      }
    }
  }
}

// A storage's product against (a) the double product of its own decoded weights, within fp32
// accumulation, and (b) the double product of the fp32 weights it was made from, within the
// storage's rounding on top.
void ExpectStorageProduct(WeightStorage storage) {
  for (const kernels::KernelSet* ks : kernels::SupportedKernelSets()) {
    for (const Shape& s : kShapes) {
      const auto x = Random(static_cast<size_t>(s.m * s.k), 3);
      const auto w = Random(static_cast<size_t>(s.n * s.k), 4, 0.25f);
      const WeightMatrix mat = WeightMatrix::Make(w, s.n, s.k, storage);
      const std::vector<float> decoded = mat.ToFloat();
      std::vector<double> own, own_abs, orig, orig_abs;
      Reference(x, decoded, s, own, own_abs);
      Reference(x, w, s, orig, orig_abs);
      std::vector<float> y(static_cast<size_t>(s.m * s.n));
      if (storage == WeightStorage::kBf16) {
        ks->matmul_bf16({x.data(), s.k, s.m, mat.bf16(), s.k, s.n, nullptr, s.k, y.data(), s.n});
      } else {
        ks->matmul_int8(
            {x.data(), s.k, s.m, mat.int8(), s.k, s.n, mat.scales(), s.k, y.data(), s.n});
      }
      for (int64_t i = 0; i < s.m; ++i) {
        double x_abs = 0;
        for (int64_t kk = 0; kk < s.k; ++kk) x_abs += std::fabs(x[i * s.k + kk]);
        for (int64_t j = 0; j < s.n; ++j) {
          const int64_t c = i * s.n + j;
          const double acc = static_cast<double>(s.k + 2) * kU;
          EXPECT_LE(std::fabs(y[c] - own[c]), acc * own_abs[c]) << ks->name << " k" << s.k;
          const double storage_error =
              storage == WeightStorage::kBf16 ? kBf16U * orig_abs[c] : mat.scales()[j] / 2 * x_abs;
          EXPECT_LE(std::fabs(y[c] - orig[c]), storage_error + acc * own_abs[c])
              << ks->name << " k" << s.k;
        }
      }
    }
  }
}

TEST(Kernels, MatMulBf16WithinBf16RoundingOfFp32) { ExpectStorageProduct(WeightStorage::kBf16); }

TEST(Kernels, MatMulInt8WithinHalfAStepOfFp32) { ExpectStorageProduct(WeightStorage::kInt8); }

// The products with activations in the weights' format (AVX512-BF16, VNNI), where the CPU has
// them, against scalar double loops over the same rounded activations:
//  - bf16 pairs: each product of two bf16 values is exact in fp32 (8 + 8 significant bits), so
//    only the fp32 accumulation's (k + 2) u of sum |x w| remains; against the fp32 activations
//    the rounding of x adds 2^-9 sum |x w| more.
//  - int8 blocks: each block's sum of code products is an exact integer; the block scales and the
//    offset of the weights' +128 are fp32 products and sums, within (blocks + 4) u of
//    sum_b s_b (sum |codes products| + 128 |sum of codes|) times the row's scale. Against the fp32
//    activations, rounding moves each by at most half a block scale: (s_b / 2) sum |w| more.
TEST(Kernels, NativeProductsMatchScalarDoubleOnRoundedActivations) {
  int checked = 0;  // kernel sets with native products on this CPU
  for (const kernels::KernelSet* ks : kernels::SupportedKernelSets()) {
    if (ks->matmul_bf16_pairs == nullptr) continue;
    ++checked;
    for (const Shape& s : kShapes) {
      const auto x = Random(static_cast<size_t>(s.m * s.k), 12);
      const auto w = Random(static_cast<size_t>(s.n * s.k), 13, 0.25f);
      const WeightMatrix bf = WeightMatrix::Make(w, s.n, s.k, WeightStorage::kBf16);
      const WeightMatrix q = WeightMatrix::Make(w, s.n, s.k, WeightStorage::kInt8);
      std::vector<uint16_t> xb(x.size());
      std::vector<float> xr(x.size());
      for (size_t i = 0; i < x.size(); ++i) xr[i] = FromBf16(xb[i] = ToBf16(x[i]));
      std::vector<double> ref, abs_sum;
      Reference(xr, bf.ToFloat(), s, ref, abs_sum);
      std::vector<float> y(static_cast<size_t>(s.m * s.n));
      ks->matmul_bf16_pairs({xb.data(), s.k, s.m, bf.bf16(), s.k, s.n, s.k, y.data(), s.n});
      for (size_t c = 0; c < y.size(); ++c) {
        EXPECT_LE(std::fabs(y[c] - ref[c]), static_cast<double>(s.k + 2) * kU * abs_sum[c])
            << ks->name << " bf16 m" << s.m << " n" << s.n << " k" << s.k;
      }
      // int8: codes and scales per block of 32, as kernels.cc quantises them.
      const int64_t blocks = (s.k + kernels::kInt8Block - 1) / kernels::kInt8Block;
      std::vector<int8_t> codes(x.size());
      std::vector<float> scales(static_cast<size_t>(s.m * blocks)), offsets(s.m);
      std::vector<double> exact(static_cast<size_t>(s.m * s.n), 0.0), bound(exact.size(), 0.0);
      for (int64_t i = 0; i < s.m; ++i) {
        double offset = 0;
        for (int64_t b = 0; b < blocks; ++b) {
          const int64_t begin = b * kernels::kInt8Block;
          const int64_t end = std::min(s.k, begin + kernels::kInt8Block);
          float abs_max = 0;
          for (int64_t kk = begin; kk < end; ++kk)
            abs_max = std::max(abs_max, std::fabs(x[i * s.k + kk]));
          const float scale = Int8Scale(abs_max);
          scales[i * blocks + b] = scale;
          int64_t sum = 0;
          for (int64_t kk = begin; kk < end; ++kk) {
            codes[i * s.k + kk] = QuantizeInt8(x[i * s.k + kk], scale);
            sum += codes[i * s.k + kk];
          }
          offset += 128.0 * scale * static_cast<double>(sum);
          for (int64_t j = 0; j < s.n; ++j) {
            int64_t dot = 0, dot_abs = 0;
            for (int64_t kk = begin; kk < end; ++kk) {
              const int64_t p = int64_t{codes[i * s.k + kk]} * q.int8()[j * s.k + kk];
              dot += p;
              dot_abs += std::abs(p) + 128 * std::abs(int64_t{codes[i * s.k + kk]});
            }
            exact[i * s.n + j] += static_cast<double>(scale) * static_cast<double>(dot);
            bound[i * s.n + j] += static_cast<double>(scale) * static_cast<double>(dot_abs);
          }
        }
        offsets[i] = static_cast<float>(offset);
      }
      ks->matmul_int8_blocks({codes.data(), scales.data(), offsets.data(), s.k, blocks, s.m,
                              q.int8(), q.scales(), s.k, s.n, s.k, y.data(), s.n});
      for (int64_t i = 0; i < s.m; ++i) {
        for (int64_t j = 0; j < s.n; ++j) {
          const int64_t c = i * s.n + j;
          const double want = exact[c] * q.scales()[j];
          const double tolerance =
              static_cast<double>(blocks + 4) * kU * bound[c] * q.scales()[j] + 1e-30;
          EXPECT_LE(std::fabs(y[c] - want), tolerance)
              << ks->name << " int8 m" << s.m << " n" << s.n << " k" << s.k << " at " << i << ","
              << j;
        }
      }
    }
  }
  if (checked == 0) GTEST_SKIP() << "no kernel set with native bf16/int8 products on this CPU";
}

TEST(Kernels, DotMatchesScalarDouble) {
  for (const kernels::KernelSet* ks : kernels::SupportedKernelSets()) {
    for (int64_t n : {1, 3, 15, 16, 17, 63, 64, 65, 1000}) {
      const auto a = Random(static_cast<size_t>(n), 5), b = Random(static_cast<size_t>(n), 6);
      double ref = 0, abs_sum = 0;
      for (int64_t i = 0; i < n; ++i) {
        ref += static_cast<double>(a[i]) * b[i];
        abs_sum += std::fabs(static_cast<double>(a[i]) * b[i]);
      }
      EXPECT_LE(std::fabs(ks->dot(a.data(), b.data(), n) - ref),
                static_cast<double>(n + 2) * kU * abs_sum)
          << ks->name << " n" << n;
    }
  }
}

// Cephes's expf is good to about 1 ulp; we allow 4 ulp (2^-21 relative) of the double exp,
// after the float subtraction of the shift (exact here: x and the shift are small integers
// plus multiples of 2^-10). Below ln(smallest normal float) = -87.34 the result is 0. The
// arguments stop at 80 so that their sum stays below the largest float.
TEST(Kernels, ExpShiftedMatchesDoubleExp) {
  for (const kernels::KernelSet* ks : kernels::SupportedKernelSets()) {
    std::vector<float> x;
    for (int i = -90 * 1024; i <= 80 * 1024; i += 37) x.push_back(static_cast<float>(i) / 1024);
    x.push_back(-std::numeric_limits<float>::infinity());
    std::vector<float> y = x;
    const float shift = 0.5f;
    const float sum = ks->exp_shifted(y.data(), static_cast<int64_t>(y.size()), shift);
    double ref_sum = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      const double arg = static_cast<double>(x[i]) - shift;
      const double ref = arg < -87.3365447505531 ? 0.0 : std::exp(arg);
      ref_sum += ref;
      EXPECT_LE(std::fabs(y[i] - ref), 4 * std::ldexp(1.0, -23) * ref) << ks->name << " " << arg;
    }
    EXPECT_NEAR(sum, ref_sum, 1e-5 * ref_sum) << ks->name;
  }
}

TEST(Kernels, SiluMulMatchesDouble) {
  for (const kernels::KernelSet* ks : kernels::SupportedKernelSets()) {
    const auto gate = Random(1001, 7, 20.0f), up = Random(1001, 8);
    std::vector<float> out = gate;
    ks->silu_mul(out.data(), up.data(), static_cast<int64_t>(out.size()));
    for (size_t i = 0; i < gate.size(); ++i) {
      const double g = gate[i];
      const double ref = g / (1.0 + std::exp(-g)) * up[i];
      // exp's 4 ulp, then one rounding each for the add, divide and multiply.
      EXPECT_LE(std::fabs(out[i] - ref), 8 * std::ldexp(1.0, -23) * std::fabs(ref) + 1e-30)
          << ks->name << " g=" << g;
    }
  }
}

TEST(WeightMatrix, Bf16RoundsToNearestEvenByHand) {
  EXPECT_EQ(ToBf16(1.0f), 0x3F80);
  EXPECT_EQ(ToBf16(-2.0f), 0xC000);
  // 1 + 2^-8 lies halfway between 1 (0x3F80, even) and 1 + 2^-7 (0x3F81): to even, down.
  EXPECT_EQ(ToBf16(1.0f + std::ldexp(1.0f, -8)), 0x3F80);
  // 1 + 3 x 2^-8 lies halfway between 0x3F81 (odd) and 1 + 2^-6 (0x3F82): to even, up.
  EXPECT_EQ(ToBf16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3F82);
  // Just above halfway rounds up.
  EXPECT_EQ(ToBf16(1.0f + std::ldexp(1.0f, -8) + std::ldexp(1.0f, -20)), 0x3F81);
  EXPECT_EQ(FromBf16(0x3F81), 1.0f + std::ldexp(1.0f, -7));
  EXPECT_TRUE(std::isnan(FromBf16(ToBf16(std::nanf("")))));
}

TEST(WeightMatrix, Int8CodesAndScalesByHand) {
  // Row 0: largest |w| 1.27, so s = 0.01 and the codes are w / 0.01 rounded. Row 1: zeros.
  const WeightMatrix m =
      WeightMatrix::Make({0.5f, -1.27f, 0.014f, 0.0f, 0.0f, 0.0f}, 2, 3, WeightStorage::kInt8);
  EXPECT_FLOAT_EQ(m.scales()[0], 0.01f);
  EXPECT_EQ(m.int8()[0], 50);
  EXPECT_EQ(m.int8()[1], -127);
  EXPECT_EQ(m.int8()[2], 1);
  EXPECT_EQ(m.int8()[3], 0);
  EXPECT_EQ(m.bytes(), 6u + 2 * sizeof(float));
  std::vector<float> row(3);
  m.DecodeRow(0, row.data());
  EXPECT_FLOAT_EQ(row[0], 0.5f);
  EXPECT_FLOAT_EQ(row[1], -1.27f);
}

TEST(WeightMatrix, Int8ShardsQuantiseLikeTheWholeMatrix) {
  // A rank holding columns [40, 100) of a row must use the whole row's scale.
  auto source = GeneratedWeights(3);
  const std::string name = "model.layers.0.mlp.down_proj.weight";
  const WeightMatrix whole =
      ReadWeightMatrix(*source, name, 16, 128, {0, 16}, {0, 128}, WeightStorage::kInt8).value();
  const WeightMatrix part =
      ReadWeightMatrix(*source, name, 16, 128, {4, 12}, {40, 100}, WeightStorage::kInt8).value();
  for (int64_t r = 0; r < 8; ++r) {
    EXPECT_EQ(part.scales()[r], whole.scales()[r + 4]);
    for (int64_t c = 0; c < 60; ++c)
      EXPECT_EQ(part.int8()[r * 60 + c], whole.int8()[(r + 4) * 128 + 40 + c]);
  }
}

TEST(WeightStorage, NamesRoundTripAndUnknownNamesAreRefused) {
  for (const std::string& name : WeightStorageNames()) {
    EXPECT_EQ(WeightStorageName(ParseWeightStorage(name).value()), name);
  }
  EXPECT_FALSE(ParseWeightStorage("fp64").ok());
  EXPECT_EQ(WeightStorageBytes(WeightStorage::kBf16), 2.0);
}

TEST(ThreadPool, EveryPartRunsExactlyOnce) {
  ThreadPool pool(3);
  EXPECT_EQ(pool.size(), 3);
  for (int round = 0; round < 200; ++round) {
    const int parts = 1 + round % 7;
    std::vector<std::atomic<int>> ran(static_cast<size_t>(parts));
    pool.Run(parts, [&](int p) { ran[static_cast<size_t>(p)].fetch_add(1); });
    for (int p = 0; p < parts; ++p) ASSERT_EQ(ran[static_cast<size_t>(p)].load(), 1) << round;
  }
}

TEST(ThreadPool, ThreadsSplitRowsWithoutChangingResults) {
  // Threads take whole weight rows: the products are bit-identical to one thread's.
  const int64_t m = 5, n = 1000, k = 300;
  const auto x = Random(static_cast<size_t>(m * k), 9);
  const auto w = Random(static_cast<size_t>(n * k), 10);
  const auto bias = Random(static_cast<size_t>(n), 11);
  for (WeightStorage storage : {WeightStorage::kFp32, WeightStorage::kBf16, WeightStorage::kInt8}) {
    const WeightMatrix mat = WeightMatrix::Make(w, n, k, storage);
    std::vector<float> one(static_cast<size_t>(m * n)), three(one.size());
    kernels::MatMulT(x.data(), mat, one.data(), m, bias.data());
    ThreadPool pool(3);
    kernels::MatMulT(x.data(), mat, three.data(), m, bias.data(), &pool);
    EXPECT_EQ(one, three) << WeightStorageName(storage);
  }
}

}  // namespace
}  // namespace shardwise
