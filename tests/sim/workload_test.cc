// Request streams and traces.
#include "shardwise/sim/workload.h"

#include <gtest/gtest.h>

#include <cmath>

#include "shardwise/sim/histogram.h"

namespace shardwise {
namespace {

TEST(Workload, PoissonMeanGapIsOneOverRate) {
  RequestSource s({5.0, 1.0}, {}, {}, 20000, 3);
  double last = 0;
  int n = 0;
  while (auto r = s.Next()) {
    last = r->arrival_s;
    ++n;
  }
  EXPECT_EQ(n, 20000);
  EXPECT_NEAR(last / n, 0.2, 0.2 * 0.03);  // law of large numbers: ~0.7% standard error
}

TEST(Workload, GammaGapsHaveTheRequestedCv) {
  RequestSource s({1.0, 3.0}, {}, {}, 50000, 5);
  double prev = 0, sum = 0, sum2 = 0;
  int n = 0;
  while (auto r = s.Next()) {
    const double gap = r->arrival_s - prev;
    prev = r->arrival_s;
    sum += gap;
    sum2 += gap * gap;
    ++n;
  }
  const double mean = sum / n;
  const double cv = std::sqrt(sum2 / n - mean * mean) / mean;
  EXPECT_NEAR(mean, 1.0, 0.05);
  EXPECT_NEAR(cv, 3.0, 0.3);
}

TEST(Workload, LognormalLengthsHaveTheRequestedMean) {
  RequestSource s({1.0, 1.0}, {LengthDistribution::kLognormal, 1000, 0.5}, {}, 40000, 9);
  double sum = 0;
  int n = 0;
  while (auto r = s.Next()) {
    sum += static_cast<double>(r->input_tokens);
    ++n;
  }
  EXPECT_NEAR(sum / n, 1000, 15);
}

TEST(Workload, OfflineArrivesAtZero) {
  RequestSource s({std::numeric_limits<double>::infinity(), 1.0}, {}, {}, 3, 1);
  while (auto r = s.Next()) EXPECT_EQ(r->arrival_s, 0.0);
}

TEST(Trace, ParsesAndRejectsBadRows) {
  auto ok = ParseTrace("arrival_s,input_tokens,output_tokens\n0.0,100,10\n0.5,200,20\n", "t.csv");
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ(ok->size(), 2u);
  EXPECT_EQ(ParseTrace("0.0,100,10\n0.5,-2,20\n", "t.csv").status().message(),
            "t.csv:2: token counts must be whole numbers from 1 to 100000000, got '0.5,-2,20'");
  EXPECT_EQ(ParseTrace("1.0,100,10\n0.5,2,20\n", "t.csv").status().message(),
            "t.csv:2: arrival times must not decrease (sort the trace)");
  EXPECT_NE(ParseTrace("", "t.csv").status().message().find("no requests"), std::string::npos);
}

TEST(Histogram, PercentilesWithinBucketWidth) {
  LogHistogram h;
  for (int i = 1; i <= 1000; ++i) h.Add(i * 1e-3);
  EXPECT_NEAR(h.Percentile(50) / 0.5, 1.0, 0.011);
  EXPECT_NEAR(h.Percentile(99) / 0.99, 1.0, 0.011);
  EXPECT_NEAR(h.Mean(), 0.5005, 1e-9);
  h.Add(2.0, 1000);  // weighted
  EXPECT_NEAR(h.Percentile(75) / 2.0, 1.0, 0.011);
  // The extremes are exact: the smallest and largest values added.
  EXPECT_DOUBLE_EQ(h.Percentile(0), 1e-3);
  EXPECT_DOUBLE_EQ(h.Percentile(100), 2.0);
}

TEST(Histogram, EqualValuesGiveThatValueAtEveryPercentile) {
  // 0.36181 s lies inside a 1% bucket whose middle is not it: every percentile is still the
  // value itself, so no percentile sits below the mean of equal values.
  LogHistogram h;
  h.Add(0.36181, 40);
  for (double p : {1.0, 50.0, 99.0}) EXPECT_DOUBLE_EQ(h.Percentile(p), 0.36181) << p;
  EXPECT_DOUBLE_EQ(h.Mean(), 0.36181);
}

}  // namespace
}  // namespace shardwise
