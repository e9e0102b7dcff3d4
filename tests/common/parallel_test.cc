// ParallelMap: every index computed once, results in index order, as a serial loop gives them.
#include "shardwise/common/parallel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>

namespace shardwise {
namespace {

TEST(ParallelMap, ResultsInIndexOrderEachComputedOnce) {
  constexpr size_t kTasks = 257;
  std::vector<std::atomic<int>> calls(kTasks);
  const std::function<std::string(size_t)> f = [&](size_t i) {
    ++calls[i];
    return std::to_string(i * i);
  };
  const std::vector<std::string> out = ParallelMap(kTasks, f);
  ASSERT_EQ(out.size(), kTasks);
  for (size_t i = 0; i < kTasks; ++i) {
    EXPECT_EQ(out[i], std::to_string(i * i));  // the serial loop's value, by hand
    EXPECT_EQ(calls[i].load(), 1) << i;
  }
  EXPECT_TRUE(ParallelMap(0, f).empty());
}

}  // namespace
}  // namespace shardwise
