// ParseDecimal: the numbers a user writes, and the texts C's strtod would also read that are not
// one (hexadecimal, padding, inf and nan).
#include "shardwise/common/decimal.h"

#include <gtest/gtest.h>

namespace shardwise {
namespace {

TEST(ParseDecimal, ReadsDecimalNumbers) {
  EXPECT_EQ(ParseDecimal("2"), 2.0);
  EXPECT_EQ(ParseDecimal("010"), 10.0);  // decimal, never octal
  EXPECT_EQ(ParseDecimal("-0.5"), -0.5);
  EXPECT_EQ(ParseDecimal("+2.5"), 2.5);
  EXPECT_EQ(ParseDecimal(".5"), 0.5);
  EXPECT_EQ(ParseDecimal("5."), 5.0);
  EXPECT_EQ(ParseDecimal("1e3"), 1000.0);
  EXPECT_EQ(ParseDecimal("2.5E-3"), 0.0025);
}

TEST(ParseDecimal, RefusesWhatIsNotOne) {
  for (const char* text : {"", " 2", "2 ", "0x10", "0x1p3", "inf", "-inf", "nan", "1e", "1e+", ".",
                           "+", "1.2.3", "2,5", "1e999", "1e-400", "$2"}) {
    EXPECT_FALSE(ParseDecimal(text).has_value()) << "'" << text << "'";
  }
}

}  // namespace
}  // namespace shardwise
