// The threads backend's collectives, by hand, and its timeout on a stalled rank.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "shardwise/runtime/comm/thread_comm.h"

namespace shardwise {
namespace {

TEST(ThreadComm, CollectivesByHand) {
  const Status s = RunOnThreads(3, 10, [](Communicator& c) -> Status {
    const float r = static_cast<float>(c.rank());
    std::vector<float> sum = {r, 1};
    SW_RETURN_IF_ERROR(c.AllReduceSum(sum));  // 0+1+2 = 3, 1+1+1 = 3
    EXPECT_EQ(sum, (std::vector<float>{3, 3}));
    std::vector<float> all(6);
    SW_RETURN_IF_ERROR(c.AllGather(std::vector<float>{r, 10 * r}, all));
    EXPECT_EQ(all, (std::vector<float>{0, 0, 1, 10, 2, 20}));
    std::vector<float> mine(1);
    SW_RETURN_IF_ERROR(c.ReduceScatterSum(std::vector<float>{1, 2, 3}, mine));  // 3 x block r
    EXPECT_EQ(mine[0], 3.0f * (r + 1));
    // All-to-all-v: rank r sends r+1 copies of 100r + dest to each dest.
    std::vector<float> send;
    std::vector<int64_t> counts;
    for (int d = 0; d < 3; ++d) {
      for (int i = 0; i <= c.rank(); ++i) send.push_back(100 * r + static_cast<float>(d));
      counts.push_back(c.rank() + 1);
    }
    std::vector<float> recv;
    std::vector<int64_t> recv_counts;
    SW_RETURN_IF_ERROR(c.AllToAllV(send, counts, recv, recv_counts));
    EXPECT_EQ(recv_counts, (std::vector<int64_t>{1, 2, 3}));
    std::vector<float> expect;
    for (int p = 0; p < 3; ++p) {
      for (int i = 0; i <= p; ++i) expect.push_back(100.0f * static_cast<float>(p) + r);
    }
    EXPECT_EQ(recv, expect);
    std::vector<float> b = {r};
    SW_RETURN_IF_ERROR(c.Broadcast(b, 2));
    EXPECT_EQ(b[0], 2.0f);
    // Split into {0, 2} and {1}; ring send/recv inside the pair.
    SW_ASSIGN_OR_RETURN(auto sub, c.Split(c.rank() % 2, -c.rank()));
    EXPECT_EQ(sub->size(), c.rank() % 2 == 0 ? 2 : 1);
    if (c.rank() % 2 == 0) {
      EXPECT_EQ(sub->rank(), c.rank() == 2 ? 0 : 1);  // key -rank puts rank 2 first
      std::vector<float> msg = {r};
      SW_RETURN_IF_ERROR(sub->Send(msg, 1 - sub->rank()));
      SW_RETURN_IF_ERROR(sub->Recv(msg, 1 - sub->rank()));
      EXPECT_EQ(msg[0], 2.0f - r);
    }
    return c.Barrier();
  });
  EXPECT_TRUE(s.ok()) << s.message();
}

TEST(ThreadComm, StatsCountCallsAndBytes) {
  const Status s = RunOnThreads(2, 10, [](Communicator& c) -> Status {
    std::vector<float> v(256, 1.0f);
    SW_RETURN_IF_ERROR(c.AllReduceSum(v));
    SW_RETURN_IF_ERROR(c.AllReduceSum(v));
    EXPECT_EQ(c.stats()[CommOp::kAllReduce].calls, 2);
    EXPECT_EQ(c.stats()[CommOp::kAllReduce].bytes, 2 * 256 * 4);
    return Status();
  });
  EXPECT_TRUE(s.ok());
}

TEST(ThreadComm, StalledRankTimesOutNamingIt) {
  const auto t0 = std::chrono::steady_clock::now();
  const Status s = RunOnThreads(3, 0.3, [](Communicator& c) -> Status {
    if (c.rank() == 1) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1500));
      return Status();
    }
    std::vector<float> v(4, 1.0f);
    return c.AllReduceSum(v);
  });
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_NE(s.message().find("all-reduce timed out after 0.3 s: rank 1 did not arrive"),
            std::string::npos)
      << s.message();
  EXPECT_LT(elapsed, 2.5);
}

TEST(ThreadComm, FailingRankAbortsTheOthers) {
  const Status s = RunOnThreads(4, 30, [](Communicator& c) -> Status {
    if (c.rank() == 3) return RuntimeFailure("rank 3 broke");
    std::vector<float> v(4, 1.0f);
    return c.AllReduceSum(v);
  });
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "rank 3 broke");  // the root cause, not the others' aborts
}

}  // namespace
}  // namespace shardwise
