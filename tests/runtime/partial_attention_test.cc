// Block-wise attention against the textbook formula, computed here in double: softmax over the
// keys each query may see (causal, optional window), plus a sink logit in the denominator.
#include "shardwise/runtime/partial_attention.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "shardwise/runtime/comm/thread_comm.h"

namespace shardwise {
namespace {

constexpr int64_t kHeads = 2, kDim = 4, kKeys = 12, kRows = 3;

struct Problem {
  std::vector<float> q, k, v;  // [rows x heads x dim], [keys x 1 x dim] (one KV head), same
  std::vector<int64_t> q_pos, k_pos;
  std::vector<float> sinks{0.7f, -0.4f};
};

Problem MakeProblem() {
  std::mt19937 gen(3);
  std::normal_distribution<float> n(0.0f, 1.0f);
  Problem p;
  for (int64_t i = 0; i < kRows * kHeads * kDim; ++i) p.q.push_back(n(gen));
  for (int64_t i = 0; i < kKeys * kDim; ++i) {
    p.k.push_back(n(gen));
    p.v.push_back(n(gen));
  }
  p.q_pos = {3, 7, 11};
  // Keys in a scrambled order, as a CP rank's two mirrored chunks arrive.
  p.k_pos = {0, 1, 10, 11, 2, 3, 8, 9, 4, 5, 6, 7};
  return p;
}

// The formula: o = sum_j softmax_j(q.k_j * scale [, sink]) v_j over visible keys.
std::vector<double> Direct(const Problem& p, int64_t window, bool sinks, float scale) {
  std::vector<double> out(static_cast<size_t>(kRows * kHeads * kDim), 0.0);
  for (int64_t r = 0; r < kRows; ++r) {
    for (int64_t h = 0; h < kHeads; ++h) {
      std::vector<double> s;
      std::vector<int64_t> idx;
      for (int64_t j = 0; j < kKeys; ++j) {
        const int64_t kp = p.k_pos[j], qp = p.q_pos[r];
        if (kp > qp || (window > 0 && kp <= qp - window)) continue;
        double dot = 0;
        for (int64_t d = 0; d < kDim; ++d)
          dot += static_cast<double>(p.q[(r * kHeads + h) * kDim + d]) * p.k[j * kDim + d];
        s.push_back(dot * scale);
        idx.push_back(j);
      }
      double denominator = sinks ? std::exp(static_cast<double>(p.sinks[h])) : 0.0;
      for (double x : s) denominator += std::exp(x);
      for (size_t i = 0; i < s.size(); ++i) {
        for (int64_t d = 0; d < kDim; ++d)
          out[(r * kHeads + h) * kDim + d] += std::exp(s[i]) / denominator * p.v[idx[i] * kDim + d];
      }
    }
  }
  return out;
}

// A partial result owning its buffer.
struct PartialAttention {
  PartialAttention(int64_t r, int64_t h, int64_t vd)
      : rows(r), heads(h), value_dim(vd), data(static_cast<size_t>(PartialFloats(r, h, vd))) {
    View().Reset();
  }
  PartialView View() { return PartialOf(data.data(), rows, heads, value_dim); }
  int64_t rows, heads, value_dim;
  std::vector<float> data;
};

std::vector<float> Blockwise(const Problem& p, int64_t window, bool sinks, float scale,
                             int blocks) {
  const std::vector<int64_t> kv_head(kHeads, 0);
  const QueryBlock q{p.q.data(), kRows, kHeads, kDim, p.q_pos.data(), kv_head.data()};
  const int64_t each = kKeys / blocks;
  // One partial per block, merged afterwards (decode), except the first block, which is
  // accumulated into directly and receives the others (prefill's ring order).
  PartialAttention total(kRows, kHeads, kDim);
  for (int b = 0; b < blocks; ++b) {
    const KeyBlock keys{p.k.data() + b * each * kDim,
                        p.v.data() + b * each * kDim,
                        kDim,
                        kDim,
                        kDim,
                        p.k_pos.data() + b * each,
                        each};
    if (b % 2 == 0) {
      AccumulateAttention(q, keys, window, scale, total.View());
    } else {
      PartialAttention part(kRows, kHeads, kDim);
      AccumulateAttention(q, keys, window, scale, part.View());
      MergeAttention(total.View(), part.View());
    }
  }
  std::vector<float> out(static_cast<size_t>(kRows * kHeads * kDim));
  FinishAttention(total.View(), sinks ? p.sinks.data() : nullptr, out.data());
  return out;
}

TEST(PartialAttention, BlocksAndMergesEqualTheSoftmax) {
  const Problem p = MakeProblem();
  for (int blocks : {1, 2, 3, 4, 6}) {
    for (int64_t window : {0, 3}) {
      for (bool sinks : {false, true}) {
        // A large scale makes some blocks' scores far above others', so the rescaling matters.
        for (float scale : {0.5f, 8.0f}) {
          const std::vector<double> want = Direct(p, window, sinks, scale);
          const std::vector<float> got = Blockwise(p, window, sinks, scale, blocks);
          for (size_t i = 0; i < want.size(); ++i) {
            ASSERT_NEAR(got[i], want[i], 2e-6 * (1 + std::fabs(want[i])))
                << blocks << " blocks, window " << window << ", sinks " << sinks << ", scale "
                << scale << ", entry " << i;
          }
        }
      }
    }
  }
}

TEST(PartialAttention, QueryThatSeesNoKeyInABlockIsUntouched) {
  // Window 3 at query position 3 sees keys 1..3 only: blocks holding keys 8..11 contribute
  // nothing, and merging an empty partial leaves a result unchanged.
  const Problem p = MakeProblem();
  PartialAttention a(kRows, kHeads, kDim), empty(kRows, kHeads, kDim);
  const std::vector<int64_t> kv_head(kHeads, 0);
  const QueryBlock q{p.q.data(), kRows, kHeads, kDim, p.q_pos.data(), kv_head.data()};
  AccumulateAttention(q, {p.k.data(), p.v.data(), kDim, kDim, kDim, p.k_pos.data(), kKeys}, 3, 1,
                      a.View());
  const std::vector<float> before = a.data;
  MergeAttention(a.View(), empty.View());
  EXPECT_EQ(a.data, before);
}

TEST(PartialAttention, RingVisitsEveryRanksBlockOnce) {
  for (int ranks : {2, 3, 4}) {
    std::vector<std::vector<float>> seen(static_cast<size_t>(ranks));
    const Status s = RunOnThreads(ranks, 10, [&](Communicator& c) -> Status {
      std::vector<float> mine{static_cast<float>(c.rank()), static_cast<float>(10 * c.rank())};
      return RingPass(c, mine, [&](const std::vector<float>& b) {
        seen[static_cast<size_t>(c.rank())].push_back(b[0]);
        EXPECT_EQ(b[1], 10 * b[0]);
      });
    });
    ASSERT_TRUE(s.ok()) << s.message();
    for (int r = 0; r < ranks; ++r) {
      std::vector<float> order = seen[static_cast<size_t>(r)];
      ASSERT_EQ(order.size(), static_cast<size_t>(ranks));
      EXPECT_EQ(order[0], r);  // its own block first, then its predecessors'
      std::sort(order.begin(), order.end());
      for (int i = 0; i < ranks; ++i) EXPECT_EQ(order[i], i);
    }
  }
}

}  // namespace
}  // namespace shardwise
