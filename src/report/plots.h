// The plots of the HTML report, one function per figure, each reading a command's JSON
// result and returning one <figure> of SVG (or an empty string when the result lacks the
// data). Internal to report/.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace shardwise::report {

// The figures' colours, one per series or component in turn.
inline const std::vector<std::string> kPalette = {"#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd",
                                                  "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
                                                  "#17becf", "#d62728"};

// Layout figures (plots_layout.cc).
std::string ParetoPlot(const nlohmann::json& plan);
std::string PhaseBars(const nlohmann::json& layouts, const std::string& phase);
std::string RooflinePlot(const nlohmann::json& roofline, const nlohmann::json& layouts);
std::string PipelineTrain(const nlohmann::json& layout);
std::string ClusterMap(const nlohmann::json& cluster_tree, const nlohmann::json& layout);

// "<h2>title</h2>", the figure and its note; nothing when the figure is empty (html_page.cc).
std::string Section(const std::string& title, const std::string& figure, const std::string& note);

// A training run's sections (train_page.cc): the answer, where the optimizer step goes, the
// memory per GPU, wall clock against cost across the cluster sizes tried, how far to trust it
// and the layouts ranked.
std::string TrainSections(const nlohmann::json& train);

// Serving and cost figures (plots_serving.cc).
// The cumulative distribution of a latency object (docs/json.md), with `slo_s` (a number, or
// null for none) drawn as a vertical rule.
std::string LatencyDistribution(const std::string& name, const std::string& title,
                                const nlohmann::json& percentiles, const nlohmann::json& slo_s);
std::string KvOccupancyPlot(const nlohmann::json& series);
// $/Mtok output against utilisation for several duty cycles (the user's highlighted), with
// an API's price as a rule; `full_load_usd_per_mtok` is the always-busy price.
std::string CostPlot(double full_load_usd_per_mtok, double duty_cycle,
                     const nlohmann::json& api_usd_per_mtok_output);

// j[key] (j[index]) when `j` is an object holding `key` (an array that long), else null: a
// saved result given to `shardwise report` may lack any field.
const nlohmann::json& Field(const nlohmann::json& j, const std::string& key);
const nlohmann::json& Field(const nlohmann::json& j, size_t index);

// A number from `j[key]`, or `fallback` when absent or not a number.
double Num(const nlohmann::json& j, const char* key, double fallback = 0);

// Whether `j[key]` is `true`: false when absent, null (a simulate run with no SLO has
// `"meets_slo": null`) or not a boolean.
bool Flag(const nlohmann::json& j, const char* key);

}  // namespace shardwise::report
