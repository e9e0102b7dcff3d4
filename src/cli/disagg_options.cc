#include "disagg_options.h"

#include <fmt/format.h>

#include "perf_options.h"
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
  sub->add_option("--prefill-redundant-experts", prefill_redundant_experts,
                  "Disaggregated: extra expert copies per EP group of the prefill pool, when it "
                  "differs from --redundant-experts (the decode pool's); DeepSeek-V3 prefills at "
                  "EP32 with 32 and decodes at EP320 with 64");
  sub->add_option("--prefill-shared-experts", prefill_shared_experts,
                  "Disaggregated: replicated or routed shared experts in the prefill pool, when "
                  "it differs from --shared-experts (DeepSeek-V3 replicates them in prefill and "
                  "routes them in decode)");
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
  if (o.prefill_redundant_experts &&
      (*o.prefill_redundant_experts < 0 || *o.prefill_redundant_experts > 1'000'000)) {
    return Error(fmt::format("--prefill-redundant-experts must be between 0 and 1,000,000, got {}",
                             *o.prefill_redundant_experts));
  }
  s.prefill_redundant_experts = o.prefill_redundant_experts;
  if (!o.prefill_shared_experts.empty()) {
    if (o.prefill_shared_experts != "replicated" && o.prefill_shared_experts != "routed") {
      return Error(fmt::format("--prefill-shared-experts must be replicated or routed, got '{}'",
                               o.prefill_shared_experts));
    }
    s.prefill_shared_experts_routed = o.prefill_shared_experts == "routed";
  }
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

PerfOptions DisaggSetup::PrefillPerf(const PerfOptions& perf) const {
  PerfOptions p = perf;
  if (prefill_redundant_experts) p.redundant_experts = *prefill_redundant_experts;
  if (prefill_shared_experts_routed) p.shared_experts_routed = *prefill_shared_experts_routed;
  return p;
}

Status DisaggSetup::CheckPools(const PerfOptions& perf) const {
  const Status prefill = CheckRedundantExperts(deployment.prefill.layout, PrefillPerf(perf));
  if (!prefill.ok()) return Error("the prefill pool: " + prefill.message());
  const Status decode = CheckRedundantExperts(deployment.decode->layout, perf);
  if (!decode.ok()) return Error("the decode pool: " + decode.message());
  return Status();
}

}  // namespace shardwise::cli
