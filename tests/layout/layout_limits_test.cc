// Layout strings whose degrees or products overflow are "too large"; bytes outside ASCII are
// an unknown degree (std::tolower is never applied to a negative char).
#include <gtest/gtest.h>

#include "shardwise/layout/layout.h"

namespace shardwise {
namespace {

std::string ErrorOf(std::string_view text) {
  const StatusOr<Layout> l = ParseLayout(text);
  return l.ok() ? "" : l.status().message();
}

TEST(LayoutLimits, HugeDegreesAreTooLarge) {
  EXPECT_EQ(ErrorOf("tp99999999999999999999"),
            "layout 'tp99999999999999999999': the degree of 'tp' is too large (at most 1000000 "
            "GPUs in all)");
  // Each degree fits in 7 digits but the product (1e21) overflows int64.
  EXPECT_EQ(ErrorOf("tp9999999cp9999999pp9999999"),
            "layout 'tp9999999cp9999999pp9999999' is too large: at most 1000000 GPUs in all");
  EXPECT_EQ(ErrorOf("dp9999999cp9999999pp92234"),
            "layout 'dp9999999cp9999999pp92234' is too large: at most 1000000 GPUs in all");
  // ep1000000 over tp1000 is dp1000: 1,000,000 GPUs, the most allowed; twice that is too many.
  EXPECT_EQ(ErrorOf("tp1000ep1000000"), "");
  EXPECT_EQ(ErrorOf("tp1000ep2000000"),
            "layout 'tp1000ep2000000' is too large: at most 1000000 GPUs in all");
  // The same bound holds with an explicit expert-TP (the expert group sets dp).
  EXPECT_EQ(ErrorOf("tp1000ep1000000etp2"),
            "layout 'tp1000ep1000000etp2' is too large: at most 1000000 GPUs in all");
  EXPECT_TRUE(ParseLayout("tp8pp125000").ok());  // exactly 1,000,000 GPUs
}

TEST(LayoutLimits, NonAsciiBytesAreUnknownDegrees) {
  EXPECT_EQ(ErrorOf("\xc3\xa9"
                    "2"),
            "layout '??2': unknown degree '??'; use dp, tp, pp, ep, cp, etp");
  EXPECT_EQ(ErrorOf("TP2"), "");  // ASCII letters are still case-insensitive
}

}  // namespace
}  // namespace shardwise
