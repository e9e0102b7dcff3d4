#include "cost_text.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <vector>

#include "shardwise/price/price.h"

namespace shardwise::text {

namespace {

// Whether every pool's GPUs cost the same an hour.
bool OnePrice(const Deployment& d) {
  const auto pools = d.pools();
  return std::all_of(pools.begin(), pools.end(), [&](const Pool& p) {
    return p.cluster.gpu.usd_per_gpu_hour == pools.front().cluster.gpu.usd_per_gpu_hour;
  });
}

}  // namespace

std::string HourlyPrice(const Deployment& d) {
  if (OnePrice(d)) {
    return fmt::format("${:.2f} per GPU-hour", d.pools().front().cluster.gpu.usd_per_gpu_hour);
  }
  std::vector<std::string> each;
  for (const Pool& p : d.pools()) {
    each.push_back(fmt::format("{} x {} at ${:.2f}", p.Gpus(), p.cluster.gpu.name,
                               p.cluster.gpu.usd_per_gpu_hour));
  }
  return fmt::format("${:.2f} per hour ({} per GPU-hour)", d.UsdPerHour(), fmt::join(each, ", "));
}

std::string CostLine(const Deployment& d, double output_tokens_per_s) {
  // Pools priced apart: HourlyPrice already leads with the bill an hour.
  std::string line = OnePrice(d)
                         ? fmt::format("${:.2f} per hour ({})", d.UsdPerHour(), HourlyPrice(d))
                         : HourlyPrice(d);
  if (output_tokens_per_s > 0) {
    line += fmt::format(", ${:.3f} per million output tokens at that throughput",
                        UsdPerMtok(d.UsdPerHour(), output_tokens_per_s));
  }
  return line;
}

}  // namespace shardwise::text
