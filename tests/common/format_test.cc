// Counts with their nouns in the tables' text: one without the plural's "s".
#include "shardwise/common/format.h"

#include <gtest/gtest.h>

namespace shardwise {
namespace {

TEST(Counted, OneTakesTheSingular) {
  EXPECT_EQ(Counted(1, "layout", "layouts"), "1 layout");
  EXPECT_EQ(Counted(0, "layout", "layouts"), "0 layouts");
  EXPECT_EQ(Counted(3, "layout", "layouts"), "3 layouts");
  // A mean count (requests in flight) is written whole: 0.6 rounds to 1, 1.4 to 1, 1.6 to 2.
  EXPECT_EQ(Counted(0.6, "request", "requests"), "1 request");
  EXPECT_EQ(Counted(1.4, "request", "requests"), "1 request");
  EXPECT_EQ(Counted(1.6, "request", "requests"), "2 requests");
}

}  // namespace
}  // namespace shardwise
