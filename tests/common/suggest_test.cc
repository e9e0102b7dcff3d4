#include "shardwise/common/suggest.h"

#include <gtest/gtest.h>

namespace shardwise {
namespace {

TEST(EditDistance, HandCases) {
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3);  // the textbook example
  EXPECT_EQ(EditDistance("", "abc"), 3);
  EXPECT_EQ(EditDistance("same", "same"), 0);
}

TEST(NearestNames, PrefersCloseAndDropsFar) {
  const std::vector<std::string> names = {"h100-sxm", "h100-pcie", "h200", "b200", "mi300x"};
  const auto near = NearestNames("h200x", names);
  ASSERT_FALSE(near.empty());
  EXPECT_EQ(near[0], "h200");
  EXPECT_TRUE(NearestNames("completely-different-thing", names).empty());
}

}  // namespace
}  // namespace shardwise
