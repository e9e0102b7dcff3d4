// Human-readable formatting of quantities for tables (decimal SI units, as datasheets use).
#pragma once

#include <string>
#include <string_view>

namespace shardwise {

std::string FormatBytes(double bytes);  // "140.0 GB", "327.7 KB"
std::string FormatCount(double count);  // "15.00T", "70.55B", "12.9M"
// At most `significant` digits in fixed notation, trailing zeros dropped ("12200000", "0.75",
// "0.000044"), an exponent only outside 1e-6 to 1e15, for tables of raw figures.
std::string FormatPlain(double value, int significant);
// A whole count with its noun: "1 layout", "3 layouts", "0 layouts" (`many` for all but one).
std::string Counted(double count, std::string_view one, std::string_view many);
std::string FormatSeconds(double seconds);  // "1.23 ms", "45.6 us", "2.10 s"
// Seconds (or milliseconds), minutes or hours, whichever reads best: "45.00 s", "12.5 min",
// "19.1 h".
std::string FormatDuration(double seconds);
// Days ("32.5 d"), or FormatDuration's unit under a day: a training run's wall clock.
std::string FormatWallClock(double seconds);
inline constexpr double kSecondsPerDay = 86400;
// Dollars and GPU-hours: to the cent from one up, to two significant digits below one (a small
// run must not read as free: "0.000044"), and a thousand and more as a count ("12.5K").
std::string FormatAmount(double value);
std::string FormatRate(double per_s, const std::string& unit);  // "989.4 T" + unit
std::string FormatBandwidth(double bytes_per_s);                // "450.0 GB/s"
// "5.6 kW of GPU boards at rated power (TDP, an upper bound on the draw), 1.25 J per output
// token", or that the GPU file states no board power.
std::string FormatEnergy(double board_power_w, double joules_per_output_token);

}  // namespace shardwise
