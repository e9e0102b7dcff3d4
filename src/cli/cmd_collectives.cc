// `shardwise collectives`: predicted collective times per message size, printed like
// nccl-tests; and --import, which fits a cluster level's calibration to a real nccl-tests log.
#include <cmath>
#include <fstream>

#include <fmt/format.h>

#include "cluster_options.h"
#include "command.h"
#include "ep_collective.h"
#include "output_guard.h"
#include "shardwise/collective/cost_model.h"
#include "shardwise/collective/group.h"
#include "shardwise/collective/nccl_tests.h"
#include "shardwise/common/format.h"
#include "shardwise/common/input_policy.h"
#include "shardwise/common/json_fields.h"
#include "shardwise/report/table.h"

namespace shardwise::cli {
namespace {

constexpr double kFloatBytes = 4.0;  // nccl-tests' default element type

struct CollectivesOptions {
  ClusterOptions cluster;
  std::string op = "all-reduce";
  std::string min_bytes = "8";
  std::string max_bytes = "8G";
  double factor = 2;
  std::string algo = "auto";
  int64_t topk = 8;
  std::string import_log;
  EpCollectiveOptions ep;
  std::string output;
  bool force = false;
  bool json = false;
};

std::string GroupDescription(const ClusterSpec& c, const GroupShape& g) {
  std::string out;
  for (int d = 0; d < g.NumLevels(); ++d) {
    if (!g.Spans(d)) continue;
    if (!out.empty()) out += " x ";
    out += fmt::format("{} {}", g.ChildrenTouched(d), c.levels[d].name);
  }
  return out.empty() ? "1 GPU" : out;
}

Status RunSweep(const CollectivesOptions& o, const ClusterSpec& c, const GroupShape& g,
                const CollectiveRequest& base) {
  SW_ASSIGN_OR_RETURN(double min_bytes, ParseByteSize(o.min_bytes, "--min-bytes"));
  SW_ASSIGN_OR_RETURN(double max_bytes, ParseByteSize(o.max_bytes, "--max-bytes"));
  if (min_bytes > max_bytes) return Error("--min-bytes must not exceed --max-bytes");
  if (!(o.factor >= 1.01 && o.factor <= 1024)) {
    return Error(fmt::format("--factor must be between 1.01 and 1024, got {:g}", o.factor));
  }
  nlohmann::json rows = nlohmann::json::array();
  Table table({"size (B)", "count", "type", "redop", "root", "time (us)", "algbw (GB/s)",
               "busbw (GB/s)", "algorithm", "bound by"});
  table.SetLeftAligned({2, 3, 8, 9});
  for (double bytes = min_bytes; bytes <= max_bytes * (1 + 1e-12); bytes *= o.factor) {
    const double rounded = std::floor(bytes / kFloatBytes) * kFloatBytes;
    CollectiveRequest r = base;
    r.bytes = std::max(rounded, kFloatBytes);
    const CollectiveCost cost = PredictCollective(c, g, r);
    const std::string bound =
        cost.binding_level >= 0 ? c.levels[cost.binding_level].name : "-";
    rows.push_back({{"bytes", r.bytes},
                    {"count", r.bytes / kFloatBytes},
                    {"time_s", cost.time_s},
                    {"latency_s", cost.latency_s},
                    {"algbw_bytes_per_s", cost.algbw_bytes_per_s},
                    {"busbw_bytes_per_s", cost.busbw_bytes_per_s},
                    {"algorithm", AlgorithmName(cost.algorithm)},
                    {"bound_by", bound}});
    table.AddRow({fmt::format("{:.0f}", r.bytes), fmt::format("{:.0f}", r.bytes / kFloatBytes),
                  "float", r.op == CollectiveOp::kAllReduce || r.op == CollectiveOp::kReduceScatter ? "sum" : "none",
                  "-1", fmt::format("{:.1f}", cost.time_s * 1e6),
                  fmt::format("{:.2f}", cost.algbw_bytes_per_s / 1e9),
                  fmt::format("{:.2f}", cost.busbw_bytes_per_s / 1e9),
                  std::string(AlgorithmName(cost.algorithm)), bound});
  }
  if (o.json) {
    PrintJson({{"cluster", c.name},
               {"gpus", g.size},
               {"op", OpName(base.op)},
               {"topk", base.op == CollectiveOp::kAllToAllTopK ? nlohmann::json(base.topk) : nullptr},
               {"rows", rows}});
    return Status();
  }
  std::cout << fmt::format("# shardwise collectives: {} on {} ({} GPUs: {}), predicted\n",
                           OpName(base.op), c.name, g.size, GroupDescription(c, g));
  if (base.op == CollectiveOp::kAllToAllTopK) {
    std::cout << fmt::format("# each token to {} of {} ranks; size = one rank's token bytes\n",
                             base.topk, g.size);
  }
  std::cout << table.Render();
  return Status();
}

Status RunImport(const CollectivesOptions& o, const ClusterSpec& c) {
  SW_ASSIGN_OR_RETURN(std::string text, ReadBoundedFile(o.import_log, kNcclLogInput));
  SW_ASSIGN_OR_RETURN(NcclTestsLog log, ParseNcclTests(text, o.import_log));
  if (!o.output.empty()) {  // refuse before the fit, not after
    SW_RETURN_IF_ERROR(
        CheckOutputPath(o.output, o.force, "level profile", [](const std::string& content) {
          const auto json = ParseJsonText(content, "");
          return json.ok() && ParseProfile(*json, "").ok();
        }));
  }
  CollectiveOp op;
  if (o.op != "all-reduce" || !log.inferred_op) {
    SW_ASSIGN_OR_RETURN(op, ParseCollectiveOp(o.op));
  } else {
    op = *log.inferred_op;
  }
  SW_ASSIGN_OR_RETURN(NcclTestsFit fit, FitNcclTests(c, log, op, o.import_log));
  // The profile is written only where the user said (--output), never into the current folder.
  const std::string& out_path = o.output;
  if (!out_path.empty()) {
    std::ofstream out(out_path);
    if (!out) return Error(fmt::format("{}: cannot write the profile (check --output)", out_path));
    out << ProfileToJson(fit.profile).dump(2) << "\n";
  }

  double worst_1mb = 0;
  nlohmann::json points = nlohmann::json::array();
  for (const FitPoint& p : fit.points) {
    const double error = p.predicted_s / p.measured_s - 1;
    if (p.bytes >= 1 << 20) worst_1mb = std::max(worst_1mb, std::fabs(error));
    points.push_back({{"bytes", p.bytes},
                      {"measured_s", p.measured_s},
                      {"predicted_s", p.predicted_s},
                      {"error", error}});
  }
  if (o.json) {
    PrintJson(
        {{"profile", ProfileToJson(fit.profile)},
         {"profile_file", out_path.empty() ? nlohmann::json(nullptr) : nlohmann::json(out_path)},
         {"points", points},
         {"max_abs_error_from_1mb", worst_1mb}});
    return Status();
  }
  const LevelProfile& p = fit.profile;
  std::cout << fmt::format(
      "Fitted level '{}' of {} to {} ({} rows, {} ranks on {} hosts, {}):\n"
      "  efficiency {:.3f}   hop latency {}   ramp: half of peak at {}, exponent {:.2f}\n"
      "  worst error from 1 MB up: {:.1f}%\n  {}\n\n",
      p.level, c.name, o.import_log, log.rows.size(), log.ranks, log.hosts, OpName(op),
      p.efficiency, FormatSeconds(p.hop_latency_s), FormatBytes(p.ramp_bytes), p.ramp_exponent,
      100 * worst_1mb,
      out_path.empty()
          ? std::string("profile not saved; add --output FILE to keep it for --profile")
          : fmt::format("profile written to {} (use it with --profile)", out_path));
  // Say so when the fitted level does not bind the largest message: the fit then says little.
  SW_ASSIGN_OR_RETURN(ClusterSpec fitted, ApplyProfile(c, p));
  SW_ASSIGN_OR_RETURN(GroupShape g, PlaceGroup(fitted, log.ranks > 0 ? log.ranks : c.num_gpus));
  CollectiveRequest largest;
  largest.op = op;
  largest.bytes = fit.points.back().bytes;
  const CollectiveCost cost = PredictCollective(fitted, g, largest);
  if (cost.binding_level >= 0 && fitted.levels[cost.binding_level].name != p.level) {
    std::cout << fmt::format(
        "note: the largest message is bound by level '{}' in this model, so the log constrains "
        "'{}' only weakly; check that the cluster's links match the measured machine.\n\n",
        fitted.levels[cost.binding_level].name, p.level);
  }
  Table table({"size (B)", "measured (us)", "fitted (us)", "error"});
  for (const FitPoint& pt : fit.points) {
    table.AddRow({fmt::format("{:.0f}", pt.bytes), fmt::format("{:.1f}", pt.measured_s * 1e6),
                  fmt::format("{:.1f}", pt.predicted_s * 1e6),
                  fmt::format("{:+.1f}%", 100 * (pt.predicted_s / pt.measured_s - 1))});
  }
  std::cout << table.Render();
  return Status();
}

Status RunCollectives(const CollectivesOptions& o) {
  SW_ASSIGN_OR_RETURN(ClusterSpec c, o.cluster.Load());
  if (!o.import_log.empty()) return RunImport(o, c);
  if (IsEpCollective(o.op)) return RunEpCollective(c, o.ep, o.op, o.algo, o.topk, o.json);
  CollectiveRequest base;
  SW_ASSIGN_OR_RETURN(base.op, ParseCollectiveOp(o.op));
  SW_ASSIGN_OR_RETURN(base.algorithm, ParseCollectiveAlgorithm(o.algo));
  SW_ASSIGN_OR_RETURN(GroupShape g, PlaceGroup(c, c.num_gpus));
  if (g.size < 2) return Error("a collective needs at least 2 GPUs; raise --gpus or --nodes");
  if (base.op == CollectiveOp::kAllToAllTopK) {
    if (o.topk < 1 || o.topk > 1024) return Error("--topk must be between 1 and 1024");
    base.topk = o.topk;
  }
  SW_RETURN_IF_ERROR(CheckAlgorithm(c, g, base.op, base.algorithm));
  return RunSweep(o, c, g, base);
}

}  // namespace

void AddCollectivesCommand(CLI::App& app, Status& result) {
  auto opts = std::make_shared<CollectivesOptions>();
  CLI::App* sub = app.add_subcommand(
      "collectives",
      "Predict a collective's time, algbw and busbw per message size on a cluster, in\n"
      "nccl-tests' columns; or fit a cluster's calibration to a real nccl-tests log.\n"
      "Examples:\n"
      "  shardwise collectives --cluster dgx-h100 --op all-reduce\n"
      "  shardwise collectives --cluster dgx-h100 --nodes 2 --op all-to-all --max-bytes 1G\n"
      "  shardwise collectives --cluster dgx-h100 --nodes 2 --import all_reduce.log\n"
      "  shardwise collectives --cluster hgx-h800 --nodes 4 --op ep-dispatch --tokens 4096 \\\n"
      "      --hidden 7168 --topk 8 --groups 4 --topk-groups 4");
  opts->cluster.AddTo(sub);
  sub->add_option("--op", opts->op,
                  "all-reduce, all-gather, reduce-scatter, all-to-all, all-to-all-topk, "
                  "send-recv, broadcast, ep-dispatch, ep-combine")
      ->capture_default_str();
  sub->add_option("--min-bytes", opts->min_bytes, "Smallest message (K/M/G suffixes)")
      ->capture_default_str();
  sub->add_option("--max-bytes", opts->max_bytes, "Largest message")->capture_default_str();
  sub->add_option("--factor", opts->factor, "Size multiplier between rows")->capture_default_str();
  sub->add_option("--algo", opts->algo, "auto, ring, tree, nvls or direct; for ep-*: auto, flat, node-dedup, low-latency")->capture_default_str();
  sub->add_option("--topk", opts->topk, "Destinations per token for all-to-all-topk")
      ->capture_default_str();
  sub->add_option("--import", opts->import_log,
                  "Fit the cluster's calibration to this nccl-tests output and write a profile");
  sub->add_option("--output", opts->output,
                  "Where --import writes the profile (default: not written)");
  sub->add_flag("--force", opts->force, "Let --output replace a file that is not a profile");
  opts->ep.AddTo(sub);
  sub->add_flag("--json", opts->json, "Print JSON");
  BindCommand(sub, opts, result, RunCollectives);
}

}  // namespace shardwise::cli
