// Figures about serving and money: latency distributions and KV occupancy from the simulator,
// and cost per million tokens against utilisation and duty cycle.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "plots.h"
#include "shardwise/report/svg.h"

namespace shardwise::report {

std::string LatencyDistribution(const std::string& name, const std::string& title,
                                const nlohmann::json& percentiles, const nlohmann::json& slo_s) {
  // {"p50": s, "p90": s, "p99": s, "mean": s, "cdf": [{"percentile": q, "value_s": s}, ...]}
  if (!percentiles.is_object() || !Field(percentiles, "cdf").is_array() ||
      Field(percentiles, "cdf").empty()) {
    return "";
  }
  std::vector<std::pair<double, double>> cdf;
  std::vector<double> xs;
  for (const auto& p : Field(percentiles, "cdf")) {
    cdf.emplace_back(Num(p, "value_s") * 1e3, Num(p, "percentile"));
    xs.push_back(cdf.back().first);
  }
  const bool slo = slo_s.is_number() && slo_s.get<double>() > 0;
  if (slo) xs.push_back(slo_s.get<double>() * 1e3);
  XyPlot plot(name, title, FitAxis("milliseconds", xs, false, true),
              Axis{"percentile of requests", 0, 100, false});
  plot.AddLine("cumulative distribution", cdf, "#1f77b4");
  std::vector<std::pair<double, double>> marks;
  std::vector<std::string> labels;
  for (const auto& [key, q] : {std::pair{"p50", 50.0}, {"p90", 90.0}, {"p99", 99.0}}) {
    marks.emplace_back(Num(percentiles, key) * 1e3, q);
    labels.push_back(fmt::format("{}: {:.3g} ms", key, Num(percentiles, key) * 1e3));
  }
  plot.AddPoints("p50, p90, p99", marks, "#d62728", labels);
  if (slo) {
    plot.AddVerticalRule(slo_s.get<double>() * 1e3,
                         fmt::format("SLO {:g} ms", slo_s.get<double>() * 1e3));
  }
  return plot.Render();
}

std::string KvOccupancyPlot(const nlohmann::json& series) {
  if (!series.is_array() || series.empty()) return "";
  std::vector<std::pair<double, double>> points;
  std::vector<double> xs;
  for (const auto& p : series) {
    points.emplace_back(Num(p, "time_s"), 100 * Num(p, "fraction"));
    xs.push_back(points.back().first);
  }
  XyPlot plot("kv", "KV-cache occupancy over simulated time, all replicas",
              FitAxis("simulated time (s)", xs, false, true),
              Axis{"KV cache in use (% of capacity)", 0, 105, false});
  plot.AddLine("occupancy", points, "#2ca02c");
  plot.AddHorizontalRule(100, "capacity");
  return plot.Render();
}

std::string CostPlot(double full_load_usd_per_mtok, double duty_cycle,
                     const nlohmann::json& api_usd_per_mtok_output) {
  if (!(full_load_usd_per_mtok > 0) || !(duty_cycle > 0)) return "";
  // Cost at utilisation u and duty cycle d is the full-load cost / (u d): the bill runs every
  // hour, tokens come only when there is work.
  std::vector<double> duties = {1.0, 0.7, 0.4};
  duties.erase(std::remove_if(duties.begin(), duties.end(),
                              [&](double d) { return std::abs(d - duty_cycle) < 1e-9; }),
               duties.end());
  std::vector<double> ys;
  auto curve = [&](double d) {
    std::vector<std::pair<double, double>> pts;
    for (int pct = 10; pct <= 100; pct += 10) {
      pts.emplace_back(pct, full_load_usd_per_mtok / (pct / 100.0 * d));
      ys.push_back(pts.back().second);
    }
    return pts;
  };
  const auto mine = curve(duty_cycle);
  std::vector<std::vector<std::pair<double, double>>> others;
  for (double d : duties) others.push_back(curve(d));
  const bool api = api_usd_per_mtok_output.is_number();
  if (api) ys.push_back(api_usd_per_mtok_output.get<double>());
  XyPlot plot("cost", "Cost per million output tokens against utilisation and duty cycle",
              Axis{"utilisation of the busy hours (%)", 0, 105, false},
              FitAxis("$ per million output tokens", ys, true, false));
  const std::vector<std::string> colors = {"#9467bd", "#8c564b", "#7f7f7f"};
  for (size_t i = 0; i < duties.size(); ++i) {
    plot.AddLine(fmt::format("duty cycle {:.0f}%", 100 * duties[i]), others[i], colors[i], true);
  }
  plot.AddPoints(fmt::format("duty cycle {:.0f}% (yours)", 100 * duty_cycle), mine, "#1f77b4");
  if (api) {
    plot.AddHorizontalRule(api_usd_per_mtok_output.get<double>(),
                           fmt::format("API ${:g}/Mtok output: below it self-hosting is cheaper",
                                       api_usd_per_mtok_output.get<double>()));
  }
  return plot.Render();
}

}  // namespace shardwise::report
