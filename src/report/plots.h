// The plots of the HTML report, one function per figure, each reading a command's JSON
// result and returning one <figure> of SVG (or an empty string when the result lacks the
// data). Internal to report/.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace shardwise::report {

// Layout figures (plots_layout.cc).
std::string ParetoPlot(const nlohmann::json& plan);
std::string PhaseBars(const nlohmann::json& layouts, const std::string& phase);
std::string RooflinePlot(const nlohmann::json& roofline, const nlohmann::json& layouts);
std::string PipelineTrain(const nlohmann::json& layout);
std::string ClusterMap(const nlohmann::json& cluster_tree, const nlohmann::json& layout);

// Serving and cost figures (plots_serving.cc).
std::string LatencyDistribution(const std::string& name, const std::string& title,
                                const nlohmann::json& percentiles);
std::string KvOccupancyPlot(const nlohmann::json& series);
// $/Mtok output against utilisation for several duty cycles (the user's highlighted), with
// an API's price as a rule; `full_load_usd_per_mtok` is the always-busy price.
std::string CostPlot(double full_load_usd_per_mtok, double duty_cycle,
                     const nlohmann::json& api_usd_per_mtok_output);

// A number from `j[key]`, or `fallback` when absent or not a number.
double Num(const nlohmann::json& j, const char* key, double fallback = 0);

}  // namespace shardwise::report
