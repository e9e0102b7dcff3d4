// The NCCL communicator against the same hand-computed collectives as the threads backend's
// tests (tests/runtime/comm_test.cc), on as many ranks as GPUs (one thread per GPU), plus its
// timeout on a stalled rank. Skips without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "gpu_test_util.h"
#include "shardwise/runtime/comm/registry.h"

namespace shardwise {
namespace {

int Ranks() { return std::min(3, cuda::FindGpus().count); }

TEST(NcclComm, CollectivesByHand) {
  SW_SKIP_WITHOUT_GPU();
  const int n = Ranks();
  const float fn = static_cast<float>(n);
  const Status s = LaunchRanks("nccl", n, 30, [&](Communicator& c) -> Status {
    EXPECT_EQ(c.size(), n);
    const float r = static_cast<float>(c.rank());
    std::vector<float> sum = {r, 1};
    SW_RETURN_IF_ERROR(c.AllReduceSum(sum));  // 0 + 1 + ... + (n-1), and n
    EXPECT_EQ(sum, (std::vector<float>{fn * (fn - 1) / 2, fn}));
    std::vector<float> all(static_cast<size_t>(2 * n));
    SW_RETURN_IF_ERROR(c.AllGather(std::vector<float>{r, 10 * r}, all));
    for (int p = 0; p < n; ++p) {
      EXPECT_EQ(all[2 * p], static_cast<float>(p));
      EXPECT_EQ(all[2 * p + 1], 10.0f * static_cast<float>(p));
    }
    std::vector<float> blocks(static_cast<size_t>(n));
    for (int p = 0; p < n; ++p) blocks[p] = static_cast<float>(p + 1);
    std::vector<float> mine(1);
    SW_RETURN_IF_ERROR(c.ReduceScatterSum(blocks, mine));  // n copies of block r = r + 1
    EXPECT_EQ(mine[0], fn * (r + 1));
    // All-to-all-v: rank r sends r+1 copies of 100r + dest to each dest.
    std::vector<float> send;
    std::vector<int64_t> counts;
    for (int d = 0; d < n; ++d) {
      for (int i = 0; i <= c.rank(); ++i) send.push_back(100 * r + static_cast<float>(d));
      counts.push_back(c.rank() + 1);
    }
    std::vector<float> recv;
    std::vector<int64_t> recv_counts;
    SW_RETURN_IF_ERROR(c.AllToAllV(send, counts, recv, recv_counts));
    std::vector<float> expect;
    std::vector<int64_t> expect_counts;
    for (int p = 0; p < n; ++p) {
      expect_counts.push_back(p + 1);
      for (int i = 0; i <= p; ++i) expect.push_back(100.0f * static_cast<float>(p) + r);
    }
    EXPECT_EQ(recv_counts, expect_counts);
    EXPECT_EQ(recv, expect);
    std::vector<float> b = {r};
    SW_RETURN_IF_ERROR(c.Broadcast(b, n - 1));
    EXPECT_EQ(b[0], fn - 1);
    // Split by parity, reversed by key; ring send/recv inside each group of two or more.
    SW_ASSIGN_OR_RETURN(auto sub, c.Split(c.rank() % 2, -c.rank()));
    const int same_parity = (n - c.rank() % 2 + 1) / 2;
    EXPECT_EQ(sub->size(), same_parity);
    if (sub->size() >= 2) {
      const int next = (sub->rank() + 1) % sub->size(),
                prev = (sub->rank() + sub->size() - 1) % sub->size();
      std::vector<float> msg = {r}, got = {-1};
      if (sub->rank() % 2 == 0) {
        SW_RETURN_IF_ERROR(sub->Send(msg, next));
        SW_RETURN_IF_ERROR(sub->Recv(got, prev));
      } else {
        SW_RETURN_IF_ERROR(sub->Recv(got, prev));
        SW_RETURN_IF_ERROR(sub->Send(msg, next));
      }
      if (sub->size() == 2) {  // the other member of this parity group, e.g. rank 2 for rank 0 of 3
        int other = 0;
        for (int p = c.rank() % 2; p < n; p += 2) other += p;
        EXPECT_EQ(got[0], static_cast<float>(other - c.rank()));
      }
    }
    return c.Barrier();
  });
  EXPECT_TRUE(s.ok()) << s.message();
}

TEST(NcclComm, StatsCountCallsAndBytes) {
  SW_SKIP_WITHOUT_GPU();
  const Status s = LaunchRanks("nccl", Ranks(), 30, [](Communicator& c) -> Status {
    std::vector<float> v(256, 1.0f);
    SW_RETURN_IF_ERROR(c.AllReduceSum(v));
    SW_RETURN_IF_ERROR(c.AllReduceSum(v));
    EXPECT_EQ(v[0], static_cast<float>(c.size() * c.size()));
    EXPECT_EQ(c.stats()[CommOp::kAllReduce].calls, 2);
    EXPECT_EQ(c.stats()[CommOp::kAllReduce].bytes, 2 * 256 * 4);
    return Status();
  });
  EXPECT_TRUE(s.ok()) << s.message();
}

TEST(NcclComm, StalledRankTimesOut) {
  SW_SKIP_WITHOUT_GPU();
  if (Ranks() < 2) GTEST_SKIP() << "needs two GPUs for two NCCL ranks (one rank per GPU)";
  const auto t0 = std::chrono::steady_clock::now();
  const Status s = LaunchRanks("nccl", 2, 0.5, [](Communicator& c) -> Status {
    if (c.rank() == 1) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2500));
      return Status();
    }
    std::vector<float> v(4, 1.0f);
    return c.AllReduceSum(v);
  });
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_NE(s.message().find("all-reduce timed out after 0.5 s"), std::string::npos) << s.message();
  EXPECT_LT(elapsed, 5.0);
}

}  // namespace
}  // namespace shardwise
