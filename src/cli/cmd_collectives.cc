// `shardwise collectives`: predicted collective times per message size, printed like
// nccl-tests; one MoE dispatch or combine as DeepEP's benchmark reports it; and --import, which
// fits a cluster level's calibration to a real nccl-tests log (api/collectives.h).
#include <fmt/format.h>

#include <fstream>

#include "command.h"
#include "numbers.h"
#include "output_guard.h"
#include "request_flags.h"
#include "shardwise/api/collectives.h"
#include "shardwise/common/format.h"
#include "shardwise/common/json_fields.h"
#include "shardwise/report/table.h"

namespace shardwise::cli {
namespace {

struct CollectivesOptions {
  ClusterFlags cluster;
  api::SweepRequest sweep;
  std::string min_bytes = "8";
  std::string max_bytes = "8G";
  std::string import_log;
  api::EpRequest ep;
  std::string output;
  bool force = false;
  bool json = false;
};

// --tokens, --hidden, --experts, --groups, --topk-groups and --dtype of ep-dispatch/ep-combine.
void AddEpCollectiveOptions(CLI::App* sub, api::EpRequest& r) {
  sub->add_option("--tokens", r.tokens, "ep-dispatch/ep-combine: tokens per GPU")
      ->capture_default_str();
  sub->add_option("--hidden", r.hidden, "ep-dispatch/ep-combine: hidden size")
      ->capture_default_str();
  sub->add_option("--experts", r.experts, "ep-dispatch/ep-combine: routed experts")
      ->capture_default_str();
  sub->add_option("--groups", r.groups,
                  "ep-dispatch/ep-combine: expert groups (DeepSeek n_group; 1 = no group limit)")
      ->capture_default_str();
  sub->add_option("--topk-groups", r.topk_groups,
                  "ep-dispatch/ep-combine: groups a token may use (DeepSeek topk_group)")
      ->capture_default_str();
  sub->add_option("--dtype", r.dtype,
                  "ep-dispatch/ep-combine payload: fp8 (with per-128 scales) or bf16 "
                  "(default: fp8 dispatch, bf16 combine)");
}

// One ep-dispatch or ep-combine on all of the cluster's GPUs, priced as DeepEP's benchmark
// reports it (time, and bytes on the binding link per GPU over the time).
Status RunEpCollective(const ClusterSpec& c, const api::EpRequest& request, bool json) {
  SW_ASSIGN_OR_RETURN(const api::EpReport rep, api::EpExchange(c, request));
  if (json) {
    PrintJson(api::ToJson(rep));
    return Status();
  }
  const api::EpRequest& o = rep.request;
  const EpDestinations& dest = rep.destinations;
  std::cout << fmt::format(
      "# shardwise collectives: {} on {} ({} GPUs, {} per node), predicted\n"
      "# {:g} tokens/GPU x hidden {} in {} ({} B/token), top-{} of {} experts{}\n"
      "# a token reaches {:.2f} ranks on {:.2f} nodes ({:.2f} remote)\n",
      o.op, c.name, rep.group.size, rep.group.members_per_unit[0], o.tokens, o.hidden, o.dtype,
      rep.chosen.token_bytes, o.topk, o.experts,
      o.groups > 1 ? fmt::format(" within {} of {} groups", o.topk_groups, o.groups) : "",
      dest.ranks, dest.nodes, dest.remote_nodes);
  Table table(
      {"algorithm", "time (us)", "bottleneck", "GB/s", "NVLink GB/s", "RDMA GB/s", "SMs", ""});
  table.SetLeftAligned({0, 2, 7});
  for (const EpDispatchCost& cost : rep.candidates) {
    const bool picked = cost.algorithm == rep.chosen.algorithm;
    table.AddRow({std::string(EpAlgorithmName(cost.algorithm)),
                  fmt::format("{:.1f}", cost.time_s * 1e6), cost.bottleneck_link,
                  fmt::format("{:.1f}", cost.bottleneck_bytes_per_s / 1e9),
                  fmt::format("{:.1f}", cost.nvlink_bytes_per_s / 1e9),
                  fmt::format("{:.1f}", cost.rdma_bytes_per_s / 1e9), fmt::format("{}", cost.sms),
                  picked ? (rep.asked ? "<- asked" : "<- chosen (fastest)") : ""});
  }
  std::cout << table.Render();
  std::cout << "# GB/s as DeepEP's benchmark counts them: NVLink = bytes received per GPU; RDMA = "
               "token bytes x destination nodes (own node included)\n";
  return Status();
}

Status RunSweep(CollectivesOptions& o, const ClusterSpec& c) {
  SW_ASSIGN_OR_RETURN(o.sweep.min_bytes, ParseByteSize(o.min_bytes, "--min-bytes"));
  SW_ASSIGN_OR_RETURN(o.sweep.max_bytes, ParseByteSize(o.max_bytes, "--max-bytes"));
  SW_ASSIGN_OR_RETURN(const api::SweepReport rep, api::Sweep(c, o.sweep));
  if (o.json) {
    PrintJson(api::ToJson(rep));
    return Status();
  }
  Table table({"size (B)", "count", "type", "redop", "root", "time (us)", "algbw (GB/s)",
               "busbw (GB/s)", "algorithm", "bound by"});
  table.SetLeftAligned({2, 3, 8, 9});
  const bool reduces =
      rep.base.op == CollectiveOp::kAllReduce || rep.base.op == CollectiveOp::kReduceScatter;
  for (const api::SweepRow& row : rep.rows) {
    const double bytes = row.request.bytes;
    table.AddRow({fmt::format("{:.0f}", bytes),
                  fmt::format("{:.0f}", bytes / api::kNcclTestsElementBytes), "float",
                  reduces ? "sum" : "none", "-1", fmt::format("{:.1f}", row.cost.time_s * 1e6),
                  fmt::format("{:.2f}", row.cost.algbw_bytes_per_s / 1e9),
                  fmt::format("{:.2f}", row.cost.busbw_bytes_per_s / 1e9),
                  std::string(AlgorithmName(row.cost.algorithm)), row.bound_by});
  }
  std::cout << fmt::format("# shardwise collectives: {} on {} ({} GPUs: {}), predicted\n",
                           OpName(rep.base.op), c.name, rep.group.size, rep.GroupDescription());
  if (rep.base.op == CollectiveOp::kAllToAllTopK) {
    std::cout << fmt::format("# each token to {} of {} ranks; size = one rank's token bytes\n",
                             rep.base.topk, rep.group.size);
  }
  std::cout << table.Render();
  return Status();
}

Status RunImport(const CollectivesOptions& o, const ClusterSpec& c) {
  if (!o.output.empty()) {  // refuse before the fit, not after
    SW_RETURN_IF_ERROR(
        CheckOutputPath(o.output, o.force, "level profile", [](const std::string& content) {
          const auto json = ParseJsonText(content, "");
          return json.ok() && ParseProfile(*json, "").ok();
        }));
  }
  // --op's default (all-reduce) leaves the op to the log when it says.
  const api::ImportRequest request{o.import_log, o.sweep.op == "all-reduce" ? "" : o.sweep.op};
  SW_ASSIGN_OR_RETURN(const api::ImportReport rep, api::Import(c, request));
  // The profile is written only where the user said (--output), never into the current folder.
  if (!o.output.empty()) {
    std::ofstream out(o.output);
    if (!out) return Error(fmt::format("{}: cannot write the profile (check --output)", o.output));
    out << ProfileToJson(rep.fit.profile).dump(2) << "\n";
  }
  if (o.json) {
    PrintJson(api::ToJson(rep, o.output));
    return Status();
  }
  const LevelProfile& p = rep.fit.profile;
  std::cout << fmt::format(
      "Fitted level '{}' of {} to {} ({} rows, {} ranks on {} hosts, {}):\n"
      "  efficiency {:.3f}   hop latency {}   ramp: half of peak at {}, exponent {:.2f}\n"
      "  worst error from 1 MB up: {:.1f}%\n  {}\n\n",
      p.level, c.name, o.import_log, rep.log.rows.size(), rep.log.ranks, rep.log.hosts,
      OpName(rep.op), p.efficiency, FormatSeconds(p.hop_latency_s), FormatBytes(p.ramp_bytes),
      p.ramp_exponent, 100 * rep.max_abs_error_from_1mb,
      o.output.empty()
          ? std::string("profile not saved; add --output FILE to keep it for --profile")
          : fmt::format("profile written to {} (use it with --profile)", o.output));
  if (rep.binding_level) {
    std::cout << fmt::format(
        "note: the largest message is bound by level '{}' in this model, so the log constrains "
        "'{}' only weakly; check that the cluster's links match the measured machine.\n\n",
        *rep.binding_level, p.level);
  }
  Table table({"size (B)", "measured (us)", "fitted (us)", "error"});
  for (const FitPoint& pt : rep.fit.points) {
    table.AddRow({fmt::format("{:.0f}", pt.bytes), fmt::format("{:.1f}", pt.measured_s * 1e6),
                  fmt::format("{:.1f}", pt.predicted_s * 1e6),
                  fmt::format("{:+.1f}%", 100 * (pt.predicted_s / pt.measured_s - 1))});
  }
  std::cout << table.Render();
  return Status();
}

Status RunCollectives(CollectivesOptions& o) {
  SW_ASSIGN_OR_RETURN(const ClusterSpec c, LoadClusterFlags(o.cluster));
  if (!o.import_log.empty()) return RunImport(o, c);
  if (api::IsEpOp(o.sweep.op)) {
    o.ep.op = o.sweep.op;
    o.ep.algorithm = o.sweep.algorithm;
    o.ep.topk = o.sweep.topk;
    return RunEpCollective(c, o.ep, o.json);
  }
  return RunSweep(o, c);
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
  opts->cluster.AddTo(sub, /*priced=*/false);
  sub->add_option("--op", opts->sweep.op,
                  "all-reduce, all-gather, reduce-scatter, all-to-all, all-to-all-topk, "
                  "send-recv, broadcast, ep-dispatch, ep-combine")
      ->capture_default_str();
  sub->add_option("--min-bytes", opts->min_bytes, "Smallest message (K/M/G suffixes)")
      ->capture_default_str();
  sub->add_option("--max-bytes", opts->max_bytes, "Largest message")->capture_default_str();
  sub->add_option("--factor", opts->sweep.factor, "Size multiplier between rows")
      ->capture_default_str();
  sub->add_option("--algo", opts->sweep.algorithm,
                  "auto, ring, tree, nvls or direct; for ep-*: auto, flat, node-dedup, low-latency")
      ->capture_default_str();
  sub->add_option("--topk", opts->sweep.topk, "Destinations per token for all-to-all-topk")
      ->capture_default_str();
  sub->add_option("--import", opts->import_log,
                  "Fit the cluster's calibration to this nccl-tests output and write a profile");
  sub->add_option("--output", opts->output,
                  "Where --import writes the profile (default: not written)");
  sub->add_flag("--force", opts->force, "Let --output replace a file that is not a profile");
  AddEpCollectiveOptions(sub, opts->ep);
  sub->add_flag("--json", opts->json, "Print JSON");
  BindCommand(sub, opts, result, RunCollectives);
}

}  // namespace shardwise::cli
