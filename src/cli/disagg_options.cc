#include "disagg_options.h"

#include <fmt/format.h>

#include "shardwise/layout/layout.h"

namespace shardwise::cli {

void DisaggCliOptions::AddTo(CLI::App* sub) {
  sub->add_option("--prefill-layout", prefill_layout,
                  "Disaggregated: the layout of each prefill worker (with --decode-layout)");
  sub->add_option("--decode-layout", decode_layout,
                  "Disaggregated: the layout of each decode worker (with --prefill-layout)");
  sub->add_option("--prefill-workers", prefill_workers, "Disaggregated: prefill workers (xP)")
      ->capture_default_str();
  sub->add_option("--decode-workers", decode_workers, "Disaggregated: decode workers (yD)")
      ->capture_default_str();
  sub->add_option("--prefill-cluster", prefill_cluster,
                  "Disaggregated: the cluster (GPU type) of the prefill pool, when it is not "
                  "--cluster's; the KV then crosses both clusters' scale-out networks");
  sub->add_option("--kv-transfer", kv_transfer,
                  "Disaggregated: send each prompt's KV cache after-prefill (the engines' "
                  "default) or layer-by-layer while it is prefilled")
      ->capture_default_str();
}

StatusOr<DisaggSetup> BuildDisaggSetup(const DisaggCliOptions& o, const ClusterSpec& cluster,
                                       bool layout_given) {
  if (layout_given) {
    return Error(
        "give --layout (aggregated) or --prefill-layout and --decode-layout (disaggregated), "
        "not both");
  }
  if (o.prefill_layout.empty() || o.decode_layout.empty()) {
    return Error(
        "a disaggregated deployment needs both --prefill-layout and --decode-layout (e.g. "
        "--prefill-layout tp4 --decode-layout tp8 --prefill-workers 2 --decode-workers 1)");
  }
  SW_ASSIGN_OR_RETURN(Layout prefill, ParseLayout(o.prefill_layout));
  SW_ASSIGN_OR_RETURN(Layout decode, ParseLayout(o.decode_layout));
  SW_ASSIGN_OR_RETURN(KvTransferMode mode, ParseKvTransferMode(o.kv_transfer));
  DisaggSetup s;
  SW_ASSIGN_OR_RETURN(s.deployment,
                      Disaggregated(prefill, o.prefill_workers, decode, o.decode_workers, mode));
  s.decode_cluster = cluster;
  s.same_cluster = o.prefill_cluster.empty();
  if (s.same_cluster) {
    s.prefill_cluster = cluster;
    if (s.deployment.Gpus() > cluster.num_gpus) {
      return Error(fmt::format(
          "{} needs {} GPUs ({} prefill + {} decode); cluster '{}' has {} (use --nodes, or "
          "fewer workers)",
          s.deployment.ToString(), s.deployment.Gpus(), s.deployment.prefill.Gpus(),
          s.deployment.decode->Gpus(), cluster.name, cluster.num_gpus));
    }
    return s;
  }
  SW_ASSIGN_OR_RETURN(s.prefill_cluster, LoadCluster(o.prefill_cluster));
  // The prefill pool gets as many nodes of its cluster as it needs.
  const int64_t per_node = s.prefill_cluster.levels[0].fan_out;
  const int64_t nodes = (s.deployment.prefill.Gpus() + per_node - 1) / per_node;
  if (nodes > 1 || s.prefill_cluster.num_gpus < s.deployment.prefill.Gpus()) {
    SW_ASSIGN_OR_RETURN(s.prefill_cluster, WithNodes(std::move(s.prefill_cluster), nodes));
  }
  if (s.deployment.decode->Gpus() > cluster.num_gpus) {
    return Error(fmt::format(
        "the decode pool ({}) needs {} GPUs; cluster '{}' has {} (use --nodes, or fewer "
        "workers)",
        s.deployment.ToString(), s.deployment.decode->Gpus(), cluster.name, cluster.num_gpus));
  }
  return s;
}

}  // namespace shardwise::cli
