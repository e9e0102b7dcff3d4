// Every op of the kernel interface on every compute backend present against the CPU backend, as
// llama.cpp's test-backend-ops runs each op on two backends and compares a normalised error
// (max |difference| over the CPU's largest |value|). Inputs are rounded to bf16 first, so a bf16
// backend sees exactly the CPU's values; its outputs differ by its own rounding (bf16 products'
// inputs, caches and weights: 8 significant bits), bounded here by 2e-2, an order of magnitude
// under what a wrong kernel gives. Without a second backend (this build has no CUDA, or the
// machine no GPU) every test skips with a message.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "shardwise/runtime/compute_registry.h"
#include "shardwise/runtime/partial_attention.h"
#include "shardwise/runtime/weight_matrix.h"

namespace shardwise {
namespace {

constexpr double kTolerance = 2e-2;

std::vector<float> Values(size_t n, uint32_t seed, float scale = 1.0f) {
  std::vector<float> v(n);
  uint32_t s = seed;
  for (float& x : v) {
    s = s * 1664525u + 1013904223u;
    x = FromBf16(ToBf16(scale * (static_cast<float>(s >> 8) / 8388608.0f - 1.0f)));
  }
  return v;
}

// The other backends this machine can run.
std::vector<std::string> OtherBackends() {
  std::vector<std::string> out;
  for (const std::string& name : DeviceComputeNames()) {
    if (name != "cpu" && MakeKernels(name, 0, 1).ok()) out.push_back(name);
  }
  return out;
}

// The other backends, or a skip saying why there are none.
#define SW_OTHER_BACKENDS(var)                                                              \
  const std::vector<std::string> var = OtherBackends();                                     \
  if (var.empty())                                                                          \
  GTEST_SKIP() << "no compute backend besides cpu here (no GPU, or a build without CUDA); " \
                  "this test runs where one is"

// The same tensors on the CPU and on another backend.
class Pair {
 public:
  explicit Pair(const std::string& other)
      : cpu_{MakeKernels("cpu", 0, 1).value()}, other_{MakeKernels(other, 0, 1).value()} {}
  // A tensor on both, holding `values` (or zeros).
  int Tensor(TensorKind kind, int64_t rows, int64_t cols, const std::vector<float>& values = {}) {
    for (Side* s : {&cpu_, &other_}) {
      s->t.push_back(s->k->Alloc(kind, rows, cols).value());
      if (!values.empty()) {
        EXPECT_TRUE(s->k->Upload(values, *s->t.back(), 0).ok());
      }
    }
    return static_cast<int>(cpu_.t.size()) - 1;
  }
  int Weights(int64_t rows, int64_t cols, uint32_t seed) {
    const std::vector<float> w = Values(static_cast<size_t>(rows * cols), seed, 0.3f);
    for (Side* s : {&cpu_, &other_}) {
      s->t.push_back(
          s->k->Weights(WeightMatrix::Make(w, rows, cols, WeightStorage::kFp32)).value());
    }
    return static_cast<int>(cpu_.t.size()) - 1;
  }
  // Runs `op` on both backends with their own tensors.
  void Run(
      const std::function<Status(Kernels&, const std::function<shardwise::Tensor&(int)>&)>& op) {
    for (Side* s : {&cpu_, &other_}) {
      const Status st = op(*s->k, [s](int i) -> shardwise::Tensor& { return *s->t[i]; });
      ASSERT_TRUE(st.ok()) << s->k->name() << ": " << st.message();
    }
  }
  // Normalised error of tensor i's first n elements.
  double Error(int i, int64_t n) {
    std::vector<float> a(static_cast<size_t>(n)), b(static_cast<size_t>(n));
    EXPECT_TRUE(cpu_.k->Download(*cpu_.t[i], a, 0).ok());
    EXPECT_TRUE(other_.k->Download(*other_.t[i], b, 0).ok());
    double scale = 0, diff = 0;
    for (size_t j = 0; j < a.size(); ++j) {
      scale = std::max(scale, static_cast<double>(std::fabs(a[j])));
      diff = std::max(diff, static_cast<double>(std::fabs(a[j] - b[j])));
    }
    return scale > 0 ? diff / scale : diff;
  }
  Kernels& cpu() { return *cpu_.k; }
  Kernels& other() { return *other_.k; }

 private:
  struct Side {
    std::unique_ptr<Kernels> k;
    std::vector<TensorPtr> t = {};
  };
  Side cpu_, other_;
};

// A step of 2 sequences x 3 rows at positions 4..6, cache blocks 1 and 0 of capacity 8, every
// row stored (slots 4..6), keys at positions 0..6.
StepRows Step() {
  StepRows s;
  s.seqs = {1, 0};
  s.positions = {4, 5, 6};
  s.store_slots = {4, 5, 6};
  s.key_positions = {0, 1, 2, 3, 4, 5, 6};
  s.rope.inv_freq = {1.0, 0.1, 0.01, 0.001};
  s.rope.attention_factor = 1.1;
  return s;
}

void BeginStep(Pair& p) {
  ASSERT_TRUE(p.cpu().BeginStep(Step()).ok());
  ASSERT_TRUE(p.other().BeginStep(Step()).ok());
}

TEST(BackendOps, NormsProductsAndActivations) {
  SW_OTHER_BACKENDS(backends);
  for (const std::string& name : backends) {
    Pair p(name);
    const int64_t rows = 5, h = 64, n = 48;
    const int x = p.Tensor(TensorKind::kFloat, rows, h, Values(rows * h, 1));
    const int y = p.Tensor(TensorKind::kFloat, rows, h, Values(rows * h, 2));
    const int w = p.Tensor(TensorKind::kFloat, 1, h, Values(h, 3));
    const int normed = p.Tensor(TensorKind::kGemmInput, rows, h);
    const int proj = p.Weights(n, h, 4);
    const int bias = p.Tensor(TensorKind::kFloat, 1, n, Values(n, 5));
    const int out = p.Tensor(TensorKind::kFloat, rows, n);
    const int act = p.Tensor(TensorKind::kGemmInput, rows, n / 2);
    p.Run([&](Kernels& k, const auto& t) -> Status {
      SW_RETURN_IF_ERROR(k.AddRmsNorm(t(x), t(y), t(w), t(normed), rows, 1e-5));
      SW_RETURN_IF_ERROR(k.Gemm(t(normed), t(proj), &t(bias), t(out), rows));
      return k.SwiGlu(t(out), t(act), rows, n / 2, 0.0f);
    });
    EXPECT_LE(p.Error(x, rows * h), 1e-6) << name << " residual add";
    EXPECT_LE(p.Error(normed, rows * h), kTolerance) << name << " RMSNorm";
    EXPECT_LE(p.Error(out, rows * n), kTolerance) << name << " product";
    EXPECT_LE(p.Error(act, rows * n / 2), kTolerance) << name << " SwiGLU";
    // The clamped SwiGLU, and a decode-sized product (one row).
    p.Run([&](Kernels& k, const auto& t) -> Status {
      SW_RETURN_IF_ERROR(k.SwiGlu(t(out), t(act), rows, n / 2, 0.5f));
      return k.Gemm(t(normed), t(proj), nullptr, t(out), 1);
    });
    EXPECT_LE(p.Error(act, rows * n / 2), kTolerance) << name << " clamped SwiGLU";
    EXPECT_LE(p.Error(out, n), kTolerance) << name << " one-row product";
  }
}

TEST(BackendOps, GqaPreparationAndAttention) {
  SW_OTHER_BACKENDS(backends);
  const StepRows step = Step();
  const int64_t heads = 4, kv_heads = 2, hd = 8, rows = step.rows(), capacity = 8;
  const int64_t qw = heads * hd, kw = kv_heads * hd;
  const std::vector<int64_t> kv_head = {0, 0, 1, 1};
  for (const std::string& name : backends) {
    Pair p(name);
    BeginStep(p);
    const int qkv =
        p.Tensor(TensorKind::kFloat, rows, qw + 2 * kw, Values(rows * (qw + 2 * kw), 6));
    const int qn = p.Tensor(TensorKind::kFloat, 1, hd, Values(hd, 7));
    const int q = p.Tensor(TensorKind::kFloat, rows, qw);
    // Caches whose slots 0..3 already hold keys (values in bf16).
    const int kc = p.Tensor(TensorKind::kCache, 2 * capacity, kw, Values(2 * capacity * kw, 8));
    const int vc = p.Tensor(TensorKind::kCache, 2 * capacity, kw, Values(2 * capacity * kw, 9));
    const int sinks = p.Tensor(TensorKind::kFloat, 1, heads, Values(heads, 10, 2.0f));
    const int partial = p.Tensor(TensorKind::kFloat, PartialFloats(rows, heads, hd), 1);
    const int out = p.Tensor(TensorKind::kGemmInput, rows, qw);
    const int all = p.Tensor(TensorKind::kGemmInput, rows, qw);
    const GqaShape shape{heads, kv_heads, hd, 0, 0, 2};
    for (int64_t window : {0, 3}) {
      p.Run([&](Kernels& k, const auto& t) -> Status {
        SW_RETURN_IF_ERROR(
            k.PrepareGqa(t(qkv), shape, &t(qn), &t(qn), 1e-5, t(q), t(kc), t(vc), capacity));
        const AttentionQueries queries{&t(q), rows, heads, hd, kv_head};
        AttentionKeys keys{&t(kc), &t(vc), true, capacity, kw, kw, hd, {}, window, 0.35f};
        SW_RETURN_IF_ERROR(k.Attend(queries, keys, t(partial), true));
        SW_RETURN_IF_ERROR(k.FinishAttention(t(partial), &t(sinks), rows, heads, hd, t(out)));
        return k.AttendAll(queries, keys, t(partial), &t(sinks), t(all));
      });
      EXPECT_LE(p.Error(q, rows * qw), kTolerance) << name << " q";
      EXPECT_LE(p.Error(kc, 2 * capacity * kw), kTolerance) << name << " k cache";
      EXPECT_LE(p.Error(vc, 2 * capacity * kw), kTolerance) << name << " v cache";
      EXPECT_LE(p.Error(out, rows * qw), kTolerance) << name << " attention, window " << window;
      EXPECT_LE(p.Error(all, rows * qw), kTolerance) << name << " fused attention";
    }
    // Keys in two blocks with explicit positions (a CP ring's), merged into one partial.
    const std::vector<int64_t> first = {0, 1, 2, 3}, second = {4, 5, 6};
    const int block = p.Tensor(TensorKind::kCache, 2 * 4, kw, Values(2 * 4 * kw, 11));
    p.Run([&](Kernels& k, const auto& t) -> Status {
      const AttentionQueries queries{&t(q), rows, heads, hd, kv_head};
      AttentionKeys a{&t(block), &t(block), false, 4, kw, kw, hd, first, 0, 0.35f};
      AttentionKeys b = a;
      b.positions = second;
      SW_RETURN_IF_ERROR(k.Attend(queries, a, t(partial), true));
      SW_RETURN_IF_ERROR(k.Attend(queries, b, t(partial), false));
      return k.FinishAttention(t(partial), nullptr, rows, heads, hd, t(out));
    });
    EXPECT_LE(p.Error(out, rows * qw), kTolerance) << name << " merged blocks";
  }
}

TEST(BackendOps, MlaForms) {
  SW_OTHER_BACKENDS(backends);
  const StepRows step = Step();
  const MlaShape s{2, 8, 4, 16, 8};  // heads, nope, rope (the step's 4 / 2 frequencies), lora, v
  const int64_t rows = step.rows(), capacity = 8, w = s.latent(), kvb = s.nope + s.value_dim;
  for (const std::string& name : backends) {
    Pair p(name);
    StepRows mla = step;
    mla.rope.inv_freq = {1.0, 0.1};
    ASSERT_TRUE(p.cpu().BeginStep(mla).ok());
    ASSERT_TRUE(p.other().BeginStep(mla).ok());
    const int q =
        p.Tensor(TensorKind::kFloat, rows, s.heads * s.qk(), Values(rows * s.heads * s.qk(), 12));
    const int kv = p.Tensor(TensorKind::kFloat, rows, w, Values(rows * w, 13));
    const int norm = p.Tensor(TensorKind::kFloat, 1, s.kv_lora, Values(s.kv_lora, 14));
    const int cache = p.Tensor(TensorKind::kCache, 2 * capacity, w, Values(2 * capacity * w, 15));
    const int kv_b = p.Weights(s.heads * kvb, s.kv_lora, 16);
    const int qa = p.Tensor(TensorKind::kFloat, rows, s.heads * w);
    const int latent = p.Tensor(TensorKind::kFloat, rows, s.heads * s.kv_lora,
                                Values(rows * s.heads * s.kv_lora, 17));
    const int lifted = p.Tensor(TensorKind::kGemmInput, rows, s.heads * s.value_dim);
    const int keys = p.Tensor(TensorKind::kCache, 2 * 7, s.heads * s.qk());
    const int values = p.Tensor(TensorKind::kCache, 2 * 7, s.heads * s.value_dim);
    p.Run([&](Kernels& k, const auto& t) -> Status {
      SW_RETURN_IF_ERROR(k.PrepareMla(t(q), t(kv), t(norm), 1e-5, s, t(cache), capacity));
      SW_RETURN_IF_ERROR(k.MlaAbsorbQuery(t(q), t(kv_b), s, t(qa), rows));
      SW_RETURN_IF_ERROR(k.MlaLiftOutput(t(latent), t(kv_b), s, t(lifted), rows));
      return k.MlaExpand(t(cache), true, capacity, 2, 7, t(kv_b), s, t(keys), t(values));
    });
    EXPECT_LE(p.Error(q, rows * s.heads * s.qk()), kTolerance) << name << " rotated q";
    EXPECT_LE(p.Error(cache, 2 * capacity * w), kTolerance) << name << " latent cache";
    EXPECT_LE(p.Error(qa, rows * s.heads * w), kTolerance) << name << " absorbed q";
    EXPECT_LE(p.Error(lifted, rows * s.heads * s.value_dim), kTolerance) << name << " lifted";
    EXPECT_LE(p.Error(keys, 14 * s.heads * s.qk()), kTolerance) << name << " expanded keys";
    EXPECT_LE(p.Error(values, 14 * s.heads * s.value_dim), kTolerance) << name << " values";
  }
}

TEST(BackendOps, RowsRoutingAndLogits) {
  SW_OTHER_BACKENDS(backends);
  const int64_t rows = 6, h = 40, experts = 8;
  const std::vector<int32_t> index = {4, 1, 5};
  const std::vector<float> weight = {0.5f, -1.0f, 2.0f};
  for (const std::string& name : backends) {
    Pair p(name);
    const int x = p.Tensor(TensorKind::kFloat, rows, h, Values(rows * h, 20));
    const int y = p.Tensor(TensorKind::kFloat, rows, h, Values(rows * h, 21));
    const int gate = p.Tensor(TensorKind::kFloat, 1, h, Values(h, 22));
    const int router = p.Tensor(TensorKind::kFloat, experts, h, Values(experts * h, 23));
    const int logits = p.Tensor(TensorKind::kFloat, rows, experts);
    const int gathered = p.Tensor(TensorKind::kFloat, 3, h);
    const int as_input = p.Tensor(TensorKind::kGemmInput, rows, h);
    p.Run([&](Kernels& k, const auto& t) -> Status {
      SW_RETURN_IF_ERROR(k.FloatGemm(t(x), t(router), nullptr, t(logits), rows));
      SW_RETURN_IF_ERROR(k.GatherRows(t(x), index, t(gathered), h));
      SW_RETURN_IF_ERROR(k.ScatterAddRows(t(gathered), index, weight, t(y), h));
      SW_RETURN_IF_ERROR(k.AddGatedRows(t(y), t(x), t(x), &t(gate), rows, h));
      return k.Copy(t(x), t(as_input), rows * h);
    });
    EXPECT_LE(p.Error(logits, rows * experts), 1e-5) << name << " fp32 router product";
    EXPECT_LE(p.Error(gathered, 3 * h), 0) << name << " gather";
    EXPECT_LE(p.Error(y, rows * h), 1e-5) << name << " scatter-add and gated add";
    EXPECT_LE(p.Error(as_input, rows * h), kTolerance) << name << " conversion";
    // Logit statistics over the first 37 of 40 columns (fp32 on both: the same numbers), and a
    // planted infinity.
    std::vector<LogitStat> stats[2];
    int side = 0;
    std::vector<float> bad = Values(rows * h, 24);
    bad[77] = INFINITY;
    const int planted = p.Tensor(TensorKind::kFloat, rows, h, bad);
    std::optional<std::pair<int64_t, float>> found[2];
    p.Run([&](Kernels& k, const auto& t) -> Status {
      stats[side].resize(static_cast<size_t>(rows));
      SW_RETURN_IF_ERROR(k.LogitStats(t(x), rows, h, 37, stats[side]));
      SW_ASSIGN_OR_RETURN(found[side], k.FirstNonFinite(t(planted), rows * h));
      ++side;
      return Status();
    });
    for (int64_t r = 0; r < rows; ++r) {
      const LogitStat &a = stats[0][static_cast<size_t>(r)], &b = stats[1][static_cast<size_t>(r)];
      EXPECT_EQ(a.best_index, b.best_index) << name << " row " << r;
      EXPECT_EQ(a.best, b.best) << name;
      EXPECT_EQ(a.second, b.second) << name;
      EXPECT_EQ(a.max_abs, b.max_abs) << name;
      EXPECT_EQ(b.non_finite, 0) << name;
    }
    ASSERT_TRUE(found[0] && found[1]) << name;
    EXPECT_EQ(found[1]->first, 77) << name;
    EXPECT_EQ(found[0]->first, 77);
  }
}

}  // namespace
}  // namespace shardwise
