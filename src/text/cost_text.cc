#include "cost_text.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <vector>

namespace shardwise::text {

// What the deployment's GPUs cost: one price per GPU-hour, or each pool's where pools on other
// GPUs are priced apart.
std::string HourlyPrice(const Deployment& d) {
  const auto pools = d.pools();
  const bool one_price = std::all_of(pools.begin(), pools.end(), [&](const Pool& p) {
    return p.cluster.gpu.usd_per_gpu_hour == pools.front().cluster.gpu.usd_per_gpu_hour;
  });
  if (one_price) {
    return fmt::format("${:.2f} per GPU-hour", pools.front().cluster.gpu.usd_per_gpu_hour);
  }
  std::vector<std::string> each;
  for (const Pool& p : pools) {
    each.push_back(fmt::format("{} x {} at ${:.2f}", p.Gpus(), p.cluster.gpu.name,
                               p.cluster.gpu.usd_per_gpu_hour));
  }
  return fmt::format("${:.2f} per hour ({} per GPU-hour)", d.UsdPerHour(), fmt::join(each, ", "));
}

std::string CostLine(const Deployment& d, double output_tokens_per_s) {
  const double usd_per_hour = d.UsdPerHour();
  // Pools priced apart: HourlyPrice already leads with the bill an hour.
  const std::string price = HourlyPrice(d);
  std::string line = price.ends_with("per GPU-hour)")
                         ? price
                         : fmt::format("${:.2f} per hour ({})", usd_per_hour, price);
  if (output_tokens_per_s > 0) {
    line += fmt::format(", ${:.3f} per million output tokens at that throughput",
                        usd_per_hour / 3600 / output_tokens_per_s * 1e6);
  }
  return line;
}

}  // namespace shardwise::text
