// `shardwise clusters`: the built-in cluster topologies, or one of them as an editable file.
#include <fmt/format.h>

#include "command.h"
#include "shardwise/common/format.h"
#include "shardwise/hw/cluster.h"
#include "shardwise/report/table.h"

namespace shardwise::cli {
namespace {

struct ClustersOptions {
  std::string show;
  bool json = false;
};

std::string LevelSummary(const ClusterSpec& c) {
  std::string out;
  for (size_t d = 0; d < c.levels.size(); ++d) {
    const TopologyLevel& l = c.levels[d];
    if (!out.empty()) out += " | ";
    out += fmt::format("{} x{} @ {}", l.name, l.fan_out,
                       FormatBandwidth(c.PerGpuEgressBytesPerS(static_cast<int>(d))));
    if (l.in_network_reduction) out += " NVLS";
    if (l.mesh) out += " mesh";
  }
  return out;
}

Status RunClusters(const ClustersOptions& opts) {
  if (!opts.show.empty()) {
    SW_ASSIGN_OR_RETURN(ClusterSpec c, LoadCluster(opts.show));
    PrintJson(ClusterToJson(c));
    return Status();
  }
  std::vector<ClusterSpec> clusters;
  for (const std::string& name : BuiltinClusterNames()) {
    SW_ASSIGN_OR_RETURN(ClusterSpec c, LoadCluster(name));
    clusters.push_back(std::move(c));
  }
  if (opts.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const ClusterSpec& c : clusters) {
      nlohmann::json j = ClusterToJson(c);
      j["gpus"] = c.num_gpus;
      out.push_back(j);
    }
    PrintJson(out);
    return Status();
  }
  Table table({"cluster", "gpu", "GPUs", "levels (per-GPU egress per direction)"});
  table.SetLeftAligned({0, 1, 3});
  for (const ClusterSpec& c : clusters) {
    table.AddRow({c.name, c.gpu.name, std::to_string(c.num_gpus), LevelSummary(c)});
  }
  std::cout << table.Render();
  std::cout
      << "\nNode-type clusters grow with --nodes N (one node by default); any cluster can be\n"
         "cut to its first N GPUs with --gpus N. 'clusters --show C' prints one as an\n"
         "editable file, with the source of every calibration number.\n";
  return Status();
}

}  // namespace

void AddClustersCommand(CLI::App& app, Status& result) {
  auto opts = std::make_shared<ClustersOptions>();
  CLI::App* sub = app.add_subcommand(
      "clusters", "List the built-in clusters: GPU, size and the levels of the network tree.");
  sub->add_option("--show", opts->show, "Print one cluster as an editable JSON file");
  sub->add_flag("--json", opts->json, "Print JSON");
  BindCommand(sub, opts, result, RunClusters);
}

}  // namespace shardwise::cli
