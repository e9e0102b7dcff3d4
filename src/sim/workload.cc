#include "shardwise/sim/workload.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <sstream>

#include "shardwise/common/input_policy.h"
#include "shardwise/common/suggest.h"

namespace shardwise {
namespace {

// Samplers written out (not <random>'s distributions) so streams are identical across
// standard libraries for a given seed.
double Uniform01(std::mt19937_64& rng) {
  return (static_cast<double>(rng() >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

double Normal(std::mt19937_64& rng) {  // Box-Muller
  const double u = Uniform01(rng);
  const double v = Uniform01(rng);
  return std::sqrt(-2.0 * std::log(u)) * std::cos(2.0 * M_PI * v);
}

// Gamma(shape, 1) by Marsaglia and Tsang (2000); shape < 1 by boosting.
double Gamma(std::mt19937_64& rng, double shape) {
  if (shape < 1.0) return Gamma(rng, shape + 1.0) * std::pow(Uniform01(rng), 1.0 / shape);
  const double d = shape - 1.0 / 3.0;
  const double c = 1.0 / std::sqrt(9.0 * d);
  while (true) {
    const double x = Normal(rng);
    const double v = std::pow(1.0 + c * x, 3);
    if (v <= 0) continue;
    const double u = Uniform01(rng);
    if (std::log(u) < 0.5 * x * x + d - d * v + d * std::log(v)) return d * v;
  }
}

// Tokens of one request in a trace; far above any model's context.
constexpr double kMaxTraceTokens = 1e8;
constexpr double kMaxTraceArrivalS = 1e9;  // about 30 years

// `field` without the spaces around it.
std::string Trimmed(const std::string& field) {
  const size_t first = field.find_first_not_of(" \t\r");
  if (first == std::string::npos) return "";
  return field.substr(first, field.find_last_not_of(" \t\r") - first + 1);
}

// Whether `field` is written as a decimal number (digits, a point, an exponent, signs): not a
// word (a header's name), nor nan, inf or hexadecimal.
bool LooksNumeric(const std::string& field) {
  const std::string text = Trimmed(field);
  return !text.empty() && text.find_first_not_of("0123456789.eE+-") == std::string::npos;
}

// The whole of `field` (spaces around it allowed) as a finite decimal number; false otherwise.
bool WholeNumber(const std::string& field, double& value) {
  if (!LooksNumeric(field)) return false;
  const std::string text = Trimmed(field);
  try {
    size_t used = 0;
    value = std::stod(text, &used);
    return used == text.size() && std::isfinite(value);
  } catch (...) {
    return false;
  }
}

}  // namespace

StatusOr<LengthDistribution> ParseLengthDistribution(const std::string& text) {
  if (text == "fixed") return LengthDistribution::kFixed;
  if (text == "uniform") return LengthDistribution::kUniform;
  if (text == "lognormal") return LengthDistribution::kLognormal;
  return Error(UnknownNameMessage("length distribution", text, {"fixed", "uniform", "lognormal"},
                                  "use fixed, uniform or lognormal"));
}

std::string_view LengthDistributionName(LengthDistribution d) {
  switch (d) {
    case LengthDistribution::kUniform:
      return "uniform";
    case LengthDistribution::kLognormal:
      return "lognormal";
    case LengthDistribution::kFixed:
      break;
  }
  return "fixed";
}

std::string LengthSpreadSuffix(const LengthSpread& spread) {
  if (spread.Fixed()) return "";
  return fmt::format(" ({} / {}, CV {:g})", LengthDistributionName(spread.input),
                     LengthDistributionName(spread.output), spread.cv);
}

StatusOr<std::vector<TraceRequest>> ParseTrace(const std::string& text, const std::string& source) {
  std::vector<TraceRequest> out;
  std::istringstream in(text);
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string a, b, c;
    if (!std::getline(fields, a, ',') || !std::getline(fields, b, ',') ||
        !std::getline(fields, c)) {
      return Error(
          fmt::format("{}:{}: expected 'arrival_s,input_tokens,output_tokens'", source, line_no));
    }
    TraceRequest r;
    double in_tokens = 0, out_tokens = 0;
    // A first line of words (no field written as a number) is a header; the columns are read by
    // position, so it must name them in their order.
    if (out.empty() && line_no == 1 && !LooksNumeric(a) && !LooksNumeric(b) && !LooksNumeric(c)) {
      if (Trimmed(a) != "arrival_s" || Trimmed(b) != "input_tokens" ||
          Trimmed(c) != "output_tokens") {
        return Error(fmt::format(
            "{}:1: the header '{}' must name the columns 'arrival_s,input_tokens,output_tokens' "
            "in that order (they are read by position): reorder the columns, or drop the header",
            source, Printable(line)));
      }
      continue;
    }
    if (!WholeNumber(a, r.arrival_s) || !WholeNumber(b, in_tokens) || !WholeNumber(c, out_tokens)) {
      return Error(fmt::format(
          "{}:{}: expected three numbers 'arrival_s,input_tokens,output_tokens', got '{}'", source,
          line_no, Printable(line)));
    }
    for (const double tokens : {in_tokens, out_tokens}) {
      if (!(tokens >= 1 && tokens <= kMaxTraceTokens) || std::floor(tokens) != tokens) {
        return Error(
            fmt::format("{}:{}: token counts must be whole numbers from 1 to {}, got "
                        "'{}'",
                        source, line_no, kMaxTraceTokens, Printable(line)));
      }
    }
    r.input_tokens = static_cast<int64_t>(in_tokens);
    r.output_tokens = static_cast<int64_t>(out_tokens);
    if (r.arrival_s < 0 || r.arrival_s > kMaxTraceArrivalS) {
      return Error(fmt::format("{}:{}: arrival time must be from 0 to {:g} s", source, line_no,
                               kMaxTraceArrivalS));
    }
    if (!out.empty() && r.arrival_s < out.back().arrival_s) {
      return Error(
          fmt::format("{}:{}: arrival times must not decrease (sort the trace)", source, line_no));
    }
    out.push_back(r);
  }
  if (out.empty()) return Error(fmt::format("{}: the trace has no requests", source));
  return out;
}

StatusOr<std::vector<TraceRequest>> LoadTrace(const std::string& path) {
  SW_ASSIGN_OR_RETURN(std::string text, ReadBoundedFile(path, kTraceInput));
  return ParseTrace(text, Printable(path, 200));
}

RequestSource::RequestSource(ArrivalSpec arrivals, LengthSpec input, LengthSpec output,
                             int64_t count, uint64_t seed, double stop_after_s)
    : arrivals_(arrivals),
      input_(input),
      output_(output),
      remaining_(count),
      stop_after_s_(stop_after_s),
      rng_(seed) {}

RequestSource::RequestSource(std::vector<TraceRequest> trace)
    : trace_(std::move(trace)), from_trace_(true) {}

int64_t RequestSource::Length(const LengthSpec& s) {
  double v = s.mean;
  switch (s.distribution) {
    case LengthDistribution::kFixed:
      break;
    case LengthDistribution::kUniform: {
      const double half = std::sqrt(3.0) * s.cv * s.mean;  // uniform's CV = half / (mean sqrt 3)
      v = s.mean - half + 2.0 * half * Uniform01(rng_);
      break;
    }
    case LengthDistribution::kLognormal: {
      const double sigma2 = std::log(1.0 + s.cv * s.cv);
      v = std::exp(std::log(s.mean) - sigma2 / 2 + std::sqrt(sigma2) * Normal(rng_));
      break;
    }
  }
  return std::max<int64_t>(1, std::llround(v));
}

double RequestSource::Gap() {
  if (std::isinf(arrivals_.rate_per_s)) return 0.0;
  const double mean = 1.0 / arrivals_.rate_per_s;
  const double cv = arrivals_.burstiness_cv;
  if (std::fabs(cv - 1.0) < 1e-12) return -std::log(Uniform01(rng_)) * mean;  // exponential
  const double shape = 1.0 / (cv * cv);  // gamma with this CV and mean
  return Gamma(rng_, shape) * mean / shape;
}

std::optional<TraceRequest> RequestSource::Next() {
  if (from_trace_) {
    if (trace_next_ >= trace_.size()) return std::nullopt;
    return trace_[trace_next_++];
  }
  if (remaining_ <= 0) return std::nullopt;
  while (true) {
    TraceRequest r;
    clock_s_ += Gap();
    if (clock_s_ > stop_after_s_) {
      remaining_ = 0;
      return std::nullopt;
    }
    r.arrival_s = clock_s_;
    r.input_tokens = Length(input_);
    r.output_tokens = Length(output_);
    if (drawn_++ % of_ >= keep_) continue;  // another replica's arrival
    --remaining_;
    return r;
  }
}

void RequestSource::KeepOnly(int64_t keep, int64_t of) {
  SW_CHECK(!from_trace_ && keep >= 1 && keep <= of, "KeepOnly: keep 1..of of a generated stream");
  keep_ = keep;
  of_ = of;
}

}  // namespace shardwise
