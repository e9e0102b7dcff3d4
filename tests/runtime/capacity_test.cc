// Expert capacity (token dropping) against hand-worked examples.
#include <gtest/gtest.h>

#include "routing.h"

namespace shardwise {
namespace {

TEST(Capacity, CeilOfTheEvenShare) {
  EXPECT_EQ(ExpertCapacity(1.0, 16, 2, 8), 4);  // 16 x 2 / 8
  EXPECT_EQ(ExpertCapacity(1.25, 16, 2, 8), 5);
  EXPECT_EQ(ExpertCapacity(0.5, 3, 2, 8), 1);  // ceil(0.375)
}

TEST(Capacity, LaterPairsOverTheLimitAreDropped) {
  // Capacity 2: expert 1 takes tokens 0 and 1, drops token 2's and token 3's pairs; expert 0
  // takes tokens 1 and 3.
  const std::vector<std::vector<int64_t>> chosen = {{1, 2}, {0, 1}, {1, 2}, {1, 0}};
  const std::vector<std::vector<bool>> keep = WithinCapacity(chosen, 3, 2);
  EXPECT_EQ(keep, (std::vector<std::vector<bool>>{
                      {true, true}, {true, true}, {false, true}, {false, true}}));
}

}  // namespace
}  // namespace shardwise
