#include "shardwise/common/format.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>

namespace shardwise {
namespace {

// Scales `value` to the largest SI prefix not above it; `prefixes` go up in steps of 1000.
std::string Scaled(double value, const char* const* prefixes, int count, const char* suffix,
                   int decimals) {
  int i = 0;
  double v = value;
  while (i + 1 < count && std::fabs(v) >= 1000.0) {
    v /= 1000.0;
    ++i;
  }
  return fmt::format("{:.{}f} {}{}", v, decimals, prefixes[i], suffix);
}

}  // namespace

std::string FormatBytes(double bytes) {
  static const char* const kPrefixes[] = {"", "K", "M", "G", "T", "P"};
  if (std::fabs(bytes) < 1000.0) return fmt::format("{:.0f} B", bytes);
  return Scaled(bytes, kPrefixes, 6, "B", 1);
}

std::string Counted(double count, std::string_view one, std::string_view many) {
  const double whole = std::round(count);
  return fmt::format("{:.0f} {}", whole, whole == 1 ? one : many);
}

std::string FormatCount(double count) {
  struct Unit {
    double scale;
    const char* suffix;
    int decimals;
  };
  static constexpr Unit kUnits[] = {
      {1e12, "T", 2}, {1e9, "B", 2}, {1e6, "M", 2}, {1e3, "K", 1}, {1, "", 0}};
  constexpr size_t kLast = std::size(kUnits) - 1;
  const double a = std::fabs(count);
  for (size_t i = 0; i <= kLast; ++i) {
    if (a < kUnits[i].scale && i < kLast) continue;
    // A count that rounds up to 1000 of its unit is shown in the next (999,996 is "1.00M").
    const double p = std::pow(10.0, kUnits[i].decimals);
    const bool rounds_up = std::round(a / kUnits[i].scale * p) / p >= 1000;
    // Past a thousand of the largest unit, a power of ten ("1.00e+18", not "1000000.00T").
    if (i == 0 && rounds_up) return fmt::format("{:.2e}", count);
    const size_t u = i > 0 && rounds_up ? i - 1 : i;
    return fmt::format("{:.{}f}{}", count / kUnits[u].scale, kUnits[u].decimals, kUnits[u].suffix);
  }
  return "";
}

std::string FormatPlain(double value, int significant) {
  const double a = std::fabs(value);
  if (a == 0) return "0";
  if (a < 1e-6 || a >= 1e15 || !std::isfinite(value)) {
    return fmt::format("{:.{}g}", value, significant);
  }
  const int decimals = std::max(0, significant - 1 - static_cast<int>(std::floor(std::log10(a))));
  std::string out = fmt::format("{:.{}f}", value, decimals);
  if (decimals > 0) {  // 0.7500 reads 0.75
    out.erase(out.find_last_not_of('0') + 1);
    if (out.back() == '.') out.pop_back();
  }
  return out;
}

std::string FormatSeconds(double seconds) {
  const double a = std::fabs(seconds);
  if (a >= 1.0) return fmt::format("{:.2f} s", seconds);
  if (a >= 1e-3) return fmt::format("{:.2f} ms", seconds * 1e3);
  return fmt::format("{:.1f} us", seconds * 1e6);
}

std::string FormatDuration(double seconds) {
  constexpr double kMinuteS = 60, kHourS = 3600;
  if (seconds < 2 * kMinuteS) return FormatSeconds(seconds);
  if (seconds < 2 * kHourS) return fmt::format("{:.1f} min", seconds / kMinuteS);
  return fmt::format("{:.1f} h", seconds / kHourS);
}

std::string FormatWallClock(double seconds) {
  constexpr double kDaysPerYear = 365.25;
  constexpr double kYearsFrom = 2;  // shorter spans read in days
  if (seconds < kSecondsPerDay) return FormatDuration(seconds);
  const double days = seconds / kSecondsPerDay;
  if (days < kYearsFrom * kDaysPerYear) return fmt::format("{:.1f} d", days);
  return fmt::format("{:.1f} years", days / kDaysPerYear);
}

std::string FormatAmount(double value) {
  constexpr int kMaxDecimals = 12;
  if (!std::isfinite(value)) return fmt::format("{}", value);  // no log10 of NaN below
  if (value >= 999.995) return FormatCount(value);
  if (value >= 1) return fmt::format("{:.2f}", value);
  if (value < std::pow(10.0, -kMaxDecimals)) return "0";
  const int decimals = std::min(kMaxDecimals, static_cast<int>(std::ceil(-std::log10(value))) + 1);
  return fmt::format("{:.{}f}", value, decimals);
}

std::string FormatRate(double per_s, const std::string& unit) {
  static const char* const kPrefixes[] = {"", "K", "M", "G", "T", "P", "E"};
  return Scaled(per_s, kPrefixes, 7, unit.c_str(), 1);
}

std::string FormatEnergy(double board_power_w, double joules_per_output_token) {
  if (!(board_power_w > 0)) return "unknown: the GPU file states no board_power_w";
  const std::string power = board_power_w >= 1e3 ? fmt::format("{:.1f} kW", board_power_w / 1e3)
                                                 : fmt::format("{:.0f} W", board_power_w);
  return fmt::format(
      "{} of GPU boards at rated power (TDP, an upper bound on the draw), {:.3g} J per output "
      "token",
      power, joules_per_output_token);
}

std::string FormatBandwidth(double bytes_per_s) { return FormatRate(bytes_per_s, "B/s"); }

}  // namespace shardwise
