// Request streams and traces.
#include "shardwise/sim/workload.h"

#include <gtest/gtest.h>

#include <cmath>

#include "shardwise/sim/samples.h"

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
  // Columns are read by position: a header naming them in another order (or other names) would
  // read prompts as arrival times, so it is refused rather than skipped.
  EXPECT_EQ(
      ParseTrace("input_tokens,output_tokens,arrival_s\n100,200,1\n", "t.csv").status().message(),
      "t.csv:1: the header 'input_tokens,output_tokens,arrival_s' must name the columns "
      "'arrival_s,input_tokens,output_tokens' in that order (they are read by position): "
      "reorder the columns, or drop the header");
  EXPECT_FALSE(ParseTrace("foo,bar,baz\n0,1,1\n", "t.csv").ok());
  EXPECT_TRUE(ParseTrace(" arrival_s , input_tokens,output_tokens\r\n0,1,1\n", "t.csv").ok());
}

TEST(Samples, PercentilesAreNearestRanks) {
  // 1, 2, ..., 1000 ms: the nearest-rank p50 is the 500th value, p99 the 990th, p99.9 the
  // 999th; the mean is 500.5 ms.
  Samples s;
  for (int i = 1000; i >= 1; --i) s.Add(i * 1e-3);  // added in reverse: sorted on demand
  EXPECT_DOUBLE_EQ(s.Percentile(50), 0.5);
  EXPECT_DOUBLE_EQ(s.Percentile(99), 0.99);
  EXPECT_DOUBLE_EQ(s.Percentile(99.9), 0.999);
  EXPECT_NEAR(s.Mean(), 0.5005, 1e-12);
  EXPECT_DOUBLE_EQ(s.Percentile(0), 1e-3);
  EXPECT_DOUBLE_EQ(s.Max(), 1.0);
  // 1,000 more at 2 s (one weighted add): the 75th percentile of 2,000 is the 1,500th value.
  s.Add(2.0, 1000);
  EXPECT_DOUBLE_EQ(s.Percentile(75), 2.0);
  EXPECT_DOUBLE_EQ(s.Percentile(50), 1.0);
  EXPECT_DOUBLE_EQ(s.Count(), 2000);
}

TEST(Samples, CloseValuesStayApartAndOrdered) {
  // The bug a bucketed histogram had: 3,035.90 s and 3,045.9 s (a TTFT and an end-to-end time
  // 10 s longer) fell in one 1% bucket and printed as equal. Exact samples keep them apart, and
  // p50 <= p90 <= p99 <= max for any data.
  Samples ttft, e2e;
  for (int i = 0; i < 100; ++i) {
    ttft.Add(3035.90 + 1e-3 * i);
    e2e.Add(3045.90 + 1e-3 * i);
  }
  EXPECT_LT(ttft.Percentile(50), e2e.Percentile(50));
  EXPECT_NEAR(e2e.Percentile(50) - ttft.Percentile(50), 10.0, 1e-9);
  Samples skewed;
  skewed.Add(1.0, 990);
  skewed.Add(1000.0, 10);  // the mean (10.99) lies above p99 (1.0): a real distribution's shape
  EXPECT_LE(skewed.Percentile(50), skewed.Percentile(90));
  EXPECT_LE(skewed.Percentile(90), skewed.Percentile(99));
  EXPECT_LE(skewed.Percentile(99), skewed.Max());
  EXPECT_DOUBLE_EQ(skewed.Percentile(99), 1.0);
  EXPECT_DOUBLE_EQ(skewed.Percentile(99.5), 1000.0);
}

TEST(Samples, EqualValuesGiveThatValueAtEveryPercentile) {
  Samples s;
  s.Add(0.36181, 40);
  for (double p : {1.0, 50.0, 99.0}) EXPECT_DOUBLE_EQ(s.Percentile(p), 0.36181) << p;
  EXPECT_DOUBLE_EQ(s.Mean(), 0.36181);
  Samples empty;
  EXPECT_EQ(empty.Percentile(50), 0.0);
}

}  // namespace
}  // namespace shardwise
