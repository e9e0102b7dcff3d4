// --html FILE and --force, shared by the commands that draw the HTML report, and the JSON
// pieces those pages need beside each command's own fields (phases, pipeline, roofline,
// cluster tree).
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "shardwise/common/status.h"
#include "shardwise/hw/cluster.h"
#include "shardwise/perf/options.h"
#include "shardwise/perf/step.h"

namespace shardwise::cli {

struct HtmlOptions {
  std::string path;  // empty: no page
  bool force = false;

  void AddTo(CLI::App* sub);
  // Refuses, before any work, a path that Write() would refuse.
  Status Check() const;
  // Renders `result` into `path`. Refuses to replace a file that is not a shardwise page
  // unless --force.
  Status Write(const nlohmann::json& result) const;
};

// Writes `html` to `path`, refusing to overwrite a file that is not a shardwise page.
Status WritePage(const std::string& path, const std::string& html, bool force);

// Per-phase breakdown of a step estimate.
nlohmann::json PhaseJson(const PhaseBreakdown& p);
// A phase as a row of explain's table: name, compute, memory, TP, EP, CP and PP comm, bubble,
// total.
std::vector<std::string> PhaseRow(const std::string& name, const PhaseBreakdown& p);
// How the decode step pipelines: stages, micro-batches per cycle, time per stage visit.
nlohmann::json PipelineJson(const StepEstimate& e);
// The cluster's levels (name, fan-out, per-GPU egress), for the cluster map.
nlohmann::json ClusterTreeJson(const ClusterSpec& cluster);
// Decode roofline of the cluster's GPU for the weight and KV formats (weights only).
nlohmann::json RooflineJson(const ModelSpec& model, const ClusterSpec& cluster,
                            const PerfOptions& perf);

}  // namespace shardwise::cli
