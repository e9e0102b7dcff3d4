// Counts in the tables' text: with their nouns (one without the plural's "s"), and scaled to K,
// M, B and T.
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

TEST(FormatCount, ScalesAndRoundsIntoTheNextUnit) {
  EXPECT_EQ(FormatCount(950), "950");
  EXPECT_EQ(FormatCount(12'500), "12.5K");
  EXPECT_EQ(FormatCount(70.554e9), "70.55B");
  EXPECT_EQ(FormatCount(15e12), "15.00T");  // had printed 15000.00B
  // Past a thousand trillion, a power of ten: 1e18 had printed "1000000.00T"; 999.996e12 rounds
  // to a thousand T.
  EXPECT_EQ(FormatCount(1e18), "1.00e+18");
  EXPECT_EQ(FormatCount(999.996e12), "1.00e+15");
  EXPECT_EQ(FormatCount(999.99e12), "999.99T");
  // A count that rounds to 1,000 of its unit moves up one: 999.95 is 1000 at no decimals,
  // 999,996e6 is 1000.00B at two.
  EXPECT_EQ(FormatCount(999.95), "1.0K");
  EXPECT_EQ(FormatCount(999.996e9), "1.00T");
  EXPECT_EQ(FormatCount(-2e6), "-2.00M");
}

TEST(FormatPlain, FixedDigitsWithoutAnExponent) {
  EXPECT_EQ(FormatPlain(1.22e7, 4), "12200000");  // {:.4g} had printed 1.22e+07
  EXPECT_EQ(FormatPlain(13400.4, 4), "13400");
  EXPECT_EQ(FormatPlain(0.6971, 4), "0.6971");
  EXPECT_EQ(FormatPlain(0.75, 4), "0.75");  // not 0.7500
  EXPECT_EQ(FormatPlain(4.4e-5, 2), "0.000044");
  EXPECT_EQ(FormatPlain(0, 4), "0");
  EXPECT_EQ(FormatPlain(2e18, 4), "2e+18");  // beyond 1e15, the exponent reads better
}

TEST(FormatDuration, SecondsMinutesOrHoursAndDaysForAWallClock) {
  EXPECT_EQ(FormatDuration(45), "45.00 s");
  EXPECT_EQ(FormatDuration(119), "119.00 s");     // under two minutes
  EXPECT_EQ(FormatDuration(750), "12.5 min");     // 750 / 60
  EXPECT_EQ(FormatDuration(68724), "19.1 h");     // 68,724 / 3,600 = 19.09
  EXPECT_EQ(FormatWallClock(68724), "19.1 h");    // under a day
  EXPECT_EQ(FormatWallClock(2807834), "32.5 d");  // 2,807,834 / 86,400 = 32.50
  // From two years on, years: 1e10 s / 86,400 / 365.25 = 316.9 years (not "115740.7 d").
  EXPECT_EQ(FormatWallClock(1e10), "316.9 years");
  EXPECT_EQ(FormatWallClock(700 * 86400.0), "700.0 d");  // under two years
}

TEST(FormatAmount, CentsCountsAndSmallRunsThatAreNotFree) {
  EXPECT_EQ(FormatAmount(18718.9), "18.7K");  // as FormatCount, a thousand and more
  EXPECT_EQ(FormatAmount(3.456), "3.46");
  EXPECT_EQ(FormatAmount(4.4e-5), "0.000044");  // two significant digits, not "0"
  EXPECT_EQ(FormatAmount(0), "0");
}

}  // namespace
}  // namespace shardwise
