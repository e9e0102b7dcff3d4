// Request streams for the simulator: arrivals (Poisson, bursty gamma, offline, or a trace
// file) and prompt/output lengths (fixed, uniform, lognormal, or from the trace). Generated
// lazily and deterministically from a seed, so a million requests cost no memory up front.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "shardwise/common/status.h"

namespace shardwise {

enum class LengthDistribution { kFixed, kUniform, kLognormal };
StatusOr<LengthDistribution> ParseLengthDistribution(const std::string& text);
std::string_view LengthDistributionName(LengthDistribution distribution);

// The coefficient of variation of uniform and lognormal lengths when none is given.
inline constexpr double kDefaultLengthCv = 0.5;

struct LengthSpec {
  LengthDistribution distribution = LengthDistribution::kFixed;
  double mean = 1024;
  double cv = kDefaultLengthCv;  // coefficient of variation for uniform and lognormal
};

// How prompt and output lengths spread about their means (simulate's, plan's, recommend's and
// price's --isl-dist, --osl-dist and --length-cv): each fixed, uniform or lognormal, with one
// coefficient of variation for both.
struct LengthSpread {
  LengthDistribution input = LengthDistribution::kFixed;
  LengthDistribution output = LengthDistribution::kFixed;
  double cv = kDefaultLengthCv;
  bool Fixed() const {
    return input == LengthDistribution::kFixed && output == LengthDistribution::kFixed;
  }
};
// " (fixed / lognormal, CV 0.5)" after the mean lengths of a header; empty when both are fixed.
std::string LengthSpreadSuffix(const LengthSpread& spread);

// The spread of output lengths that puts a closed loop's clients out of phase (simulate's band
// and `--osl-dist uniform --length-cv 0.01`): a request a few tokens longer or shorter than its
// wave finishes iterations apart from it, which breaks the waves of a fixed-length loop. Larger
// spreads change little: Llama-3.1-70B fp8 TP8 on vLLM, 1,024/1,024 tokens, ten requests per
// client, at 4, 16 and 64 clients: mean TTFT 55, 85 and 183 ms at 0.01 and 55, 82 and 165 ms at
// 0.05.
inline constexpr double kOutOfPhaseOutputCv = 0.01;

struct ArrivalSpec {
  double rate_per_s = 10;      // infinity: every request at t = 0 (offline)
  double burstiness_cv = 1.0;  // CV of inter-arrival gaps: 1 = Poisson, > 1 bursty (gamma)
};

struct TraceRequest {
  double arrival_s = 0;
  int64_t input_tokens = 0;
  int64_t output_tokens = 0;
};

// Reads "arrival_s,input_tokens,output_tokens" rows (a header line is allowed); times must be
// non-decreasing and lengths positive.
StatusOr<std::vector<TraceRequest>> ParseTrace(const std::string& text, const std::string& source);
StatusOr<std::vector<TraceRequest>> LoadTrace(const std::string& path);

// Produces requests one at a time, in arrival order.
class RequestSource {
 public:
  // `count` requests, or every request arriving before `stop_after_s`, whichever ends first.
  RequestSource(ArrivalSpec arrivals, LengthSpec input, LengthSpec output, int64_t count,
                uint64_t seed, double stop_after_s = std::numeric_limits<double>::infinity());
  explicit RequestSource(std::vector<TraceRequest> trace);
  // Keeps `keep` of every `of` generated requests (those whose index mod `of` is below `keep`),
  // as a round-robin router over `of` replicas hands `keep` of them their arrivals; `count`
  // then counts the requests kept. Generated streams only.
  void KeepOnly(int64_t keep, int64_t of);
  std::optional<TraceRequest> Next();

 private:
  int64_t Length(const LengthSpec& spec);
  double Gap();

  ArrivalSpec arrivals_;
  LengthSpec input_, output_;
  int64_t remaining_ = 0;
  double stop_after_s_ = 0;
  double clock_s_ = 0;
  std::mt19937_64 rng_;
  std::vector<TraceRequest> trace_;
  size_t trace_next_ = 0;
  bool from_trace_ = false;
  int64_t keep_ = 1, of_ = 1;  // KeepOnly
  int64_t drawn_ = 0;          // requests generated, kept or not
};

}  // namespace shardwise
