#include "html_output.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>

#include "output_guard.h"
#include "shardwise/common/format.h"
#include "shardwise/perf/roofline.h"
#include "shardwise/report/html_page.h"

namespace shardwise::cli {
namespace {

Status CheckPagePath(const std::string& path, bool force) {
  return CheckOutputPath(path, force, "page written by shardwise", [](const std::string& content) {
    return content.find(report::kGeneratorMeta) != std::string::npos;
  });
}

}  // namespace

void HtmlOptions::AddTo(CLI::App* sub) {
  sub->add_option("--html", path,
                  "Also write the result as a self-contained HTML page with plots (no network, "
                  "no JavaScript needed)");
  sub->add_flag("--force", force,
                "Let --html (and --emit-dir) replace files that shardwise did not write");
}

Status HtmlOptions::Write(const nlohmann::json& result) const {
  if (path.empty()) return Status();
  SW_ASSIGN_OR_RETURN(std::string html, report::RenderHtmlPage(result));
  return WritePage(path, html, force);
}

Status HtmlOptions::Check() const { return path.empty() ? Status() : CheckPagePath(path, force); }

Status WritePage(const std::string& path, const std::string& html, bool force) {
  SW_RETURN_IF_ERROR(CheckPagePath(path, force));
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << html;
  out.close();
  if (!out)
    return Error(fmt::format("--html {}: cannot write the file (check the directory)", path));
  return Status();
}

nlohmann::json PhaseJson(const PhaseBreakdown& p) {
  return {{"compute_s", p.compute_s},
          {"memory_s", p.memory_s},
          {"tp_comm_s", p.tp_comm_s},
          {"ep_comm_s", p.ep_comm_s},
          {"cp_comm_s", p.cp_comm_s},
          {"pp_comm_s", p.pp_comm_s},
          {"bubble_s", p.bubble_s},
          {"launch_s", p.launch_s},
          {"overhead_s", p.overhead_s},
          {"total_s", p.total_s},
          {"flops", p.flops},
          {"hbm_bytes", p.hbm_bytes},
          {"ep_algorithm", p.ep_algorithm
                               ? nlohmann::json(std::string(EpAlgorithmName(*p.ep_algorithm)))
                               : nlohmann::json(nullptr)},
          {"two_batch_overlap", p.two_batch_overlap}};
}

std::vector<std::string> PhaseRow(const std::string& name, const PhaseBreakdown& p) {
  return {name,
          FormatSeconds(p.compute_s),
          FormatSeconds(p.memory_s),
          FormatSeconds(p.tp_comm_s),
          FormatSeconds(p.ep_comm_s),
          FormatSeconds(p.cp_comm_s),
          FormatSeconds(p.pp_comm_s),
          FormatSeconds(p.bubble_s),
          FormatSeconds(p.total_s)};
}

nlohmann::json PipelineJson(const StepEstimate& e) {
  // As the step model pipelines decode: the batch of each attention-DP rank is cut into at
  // most `pp` micro-batches; the slowest stage serves each of them once per cycle.
  const Layout& l = e.layout;
  const double per_rank =
      std::max(1.0, static_cast<double>(e.workload.batch) / static_cast<double>(l.AttentionDp()));
  const double micro = std::min(static_cast<double>(l.pp), per_rank);
  const double busy_s = e.decode.total_s - e.decode.bubble_s;
  return {{"stages", l.pp},
          {"micro_batches", static_cast<int64_t>(micro)},
          {"stage_time_s", busy_s / micro}};
}

nlohmann::json ClusterTreeJson(const ClusterSpec& cluster) {
  nlohmann::json levels = nlohmann::json::array();
  for (const TopologyLevel& level : cluster.levels) {
    levels.push_back({{"name", level.name},
                      {"fan_out", level.fan_out},
                      {"egress_bytes_per_s", level.egress_bytes_per_s}});
  }
  return {{"gpus", cluster.num_gpus}, {"gpu", cluster.gpu.name}, {"levels", levels}};
}

nlohmann::json RooflineJson(const ModelSpec& model, const ClusterSpec& cluster,
                            const PerfOptions& perf) {
  const Roofline r = ComputeRoofline(model, cluster.gpu, perf.weight_dtype, perf.kv_dtype, 0,
                                     cluster.GpusPerNode());
  nlohmann::json points = nlohmann::json::array();
  for (const RooflinePoint& p : r.points) {
    points.push_back({{"batch", p.batch},
                      {"arithmetic_intensity", p.intensity},
                      {"attainable_flops_per_s", p.attainable_flops_per_s}});
  }
  return {{"gpu", cluster.gpu.name},
          {"compute_dtype", DtypeName(r.compute_dtype)},
          {"ridge_flops_per_byte", r.ridge_flops_per_byte},
          {"points", points}};
}

}  // namespace shardwise::cli
