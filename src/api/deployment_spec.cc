#include "shardwise/api/deployment_spec.h"

#include <fmt/format.h>

namespace shardwise::api {
namespace {

StatusOr<Layout> ParsePoolLayout(const std::string& text, const std::string& field) {
  if (text.empty()) {
    return FieldError(field,
                      fmt::format("`{}` is empty; give a layout such as tp8 or dp8ep8", field));
  }
  StatusOr<Layout> layout = ParseLayout(text);
  if (!layout.ok()) return layout.status().WithField(field);
  return layout;
}

StatusOr<Deployment> Disaggregated(const Catalog& catalog, const ModelSpec& model,
                                   const ClusterSpec& cluster, const ServingOptions& options,
                                   const DeploymentSpec& spec) {
  if (spec.prefill_layout.empty() || spec.decode_layout.empty()) {
    return FieldError(spec.prefill_layout.empty() ? "prefill_layout" : "decode_layout",
                      "a disaggregated deployment needs both `prefill_layout` and "
                      "`decode_layout` (e.g. tp4 and tp8, with `prefill_workers` 2 and "
                      "`decode_workers` 1)");
  }
  SW_ASSIGN_OR_RETURN(Layout prefill, ParsePoolLayout(spec.prefill_layout, "prefill_layout"));
  SW_ASSIGN_OR_RETURN(Layout decode, ParsePoolLayout(spec.decode_layout, "decode_layout"));
  SW_ASSIGN_OR_RETURN(KvTransferMode mode, ParseKvTransferMode(spec.kv_transfer));
  ServingOptions prefill_options = options;
  PerfOptions& pp = prefill_options.perf;
  if (spec.prefill_redundant_experts) {
    if (*spec.prefill_redundant_experts < 0 || *spec.prefill_redundant_experts > 1'000'000) {
      return FieldError("prefill_redundant_experts",
                        fmt::format("`prefill_redundant_experts` must be between 0 and 1,000,000, "
                                    "got {}",
                                    *spec.prefill_redundant_experts));
    }
    pp.redundant_experts = *spec.prefill_redundant_experts;
  }
  if (!spec.prefill_shared_experts.empty()) {
    if (spec.prefill_shared_experts != "replicated" && spec.prefill_shared_experts != "routed") {
      return FieldError("prefill_shared_experts",
                        fmt::format("`prefill_shared_experts` must be replicated or routed, got "
                                    "'{}'",
                                    spec.prefill_shared_experts));
    }
    pp.shared_experts_routed = spec.prefill_shared_experts == "routed";
  }
  if (spec.prefill_ep) pp.ep = *spec.prefill_ep;
  ServingOptions decode_options = options;
  if (spec.ep) decode_options.perf.ep = *spec.ep;
  const bool same_cluster = spec.prefill_cluster.empty();
  ClusterSpec prefill_cluster = cluster;
  if (!same_cluster) {
    ClusterRef ref;
    ref.name = spec.prefill_cluster;
    SW_ASSIGN_OR_RETURN(prefill_cluster, catalog.Cluster(ref));
    // The same GPUs cost the same wherever they sit: a price given for --cluster's GPUs covers
    // a prefill cluster of that GPU too; another GPU keeps its catalog price (the text and JSON
    // show each pool's).
    if (prefill_cluster.gpu.name == cluster.gpu.name) {
      prefill_cluster.gpu.usd_per_gpu_hour = cluster.gpu.usd_per_gpu_hour;
    }
    // The prefill pool gets as many nodes of its cluster as it needs.
    const int64_t per_node = prefill_cluster.GpusPerNode();
    if (spec.prefill_workers < 1 || spec.prefill_workers > kMaxPoolWorkers) {  // before a product
      return FieldError("prefill_workers",
                        fmt::format("`prefill_workers` must be between 1 and {}, got {}",
                                    kMaxPoolWorkers, spec.prefill_workers));
    }
    const int64_t gpus = spec.prefill_workers * prefill.gpus();
    const int64_t nodes = (gpus + per_node - 1) / per_node;
    if (nodes > 1 || prefill_cluster.num_gpus < gpus) {
      StatusOr<ClusterSpec> scaled = WithNodes(std::move(prefill_cluster), nodes);
      if (!scaled.ok()) return scaled.status().WithField("prefill_cluster");
      prefill_cluster = std::move(scaled).value();
    }
  }
  return Deployment::Disaggregated(
      model,
      prefill_options.PoolFor(PoolRole::kPrefill, prefill, spec.prefill_workers, prefill_cluster),
      decode_options.PoolFor(PoolRole::kDecode, decode, spec.decode_workers, cluster), mode,
      same_cluster);
}

}  // namespace

DeploymentSpec SpecOf(const Deployment& d) {
  DeploymentSpec s;
  if (!d.disaggregated()) {
    s.layout = d.prefill().layout.ToString();
    s.ep = d.prefill().perf.ep;
    return s;
  }
  const Pool& p = d.prefill();
  const Pool& q = d.decode();
  s.prefill_layout = p.layout.ToString();
  s.decode_layout = q.layout.ToString();
  s.prefill_workers = p.workers;
  s.decode_workers = q.workers;
  if (!d.same_cluster()) s.prefill_cluster = p.cluster.name;
  if (p.perf.redundant_experts != q.perf.redundant_experts) {
    s.prefill_redundant_experts = p.perf.redundant_experts;
  }
  if (p.perf.shared_experts_routed != q.perf.shared_experts_routed) {
    s.prefill_shared_experts = p.perf.shared_experts_routed ? "routed" : "replicated";
  }
  s.kv_transfer = std::string(KvTransferModeName(d.transfer()));
  s.ep = q.perf.ep;
  s.prefill_ep = p.perf.ep;
  return s;
}

StatusOr<Deployment> ResolveDeployment(const Catalog& catalog, const ModelSpec& model,
                                       const ClusterSpec& cluster, const ServingOptions& options,
                                       const DeploymentSpec& spec) {
  if (spec.Disaggregated()) {
    if (!spec.layout.empty()) {
      return FieldError("layout",
                        "give `layout` (aggregated) or `prefill_layout` and `decode_layout` "
                        "(disaggregated), not both");
    }
    return Disaggregated(catalog, model, cluster, options, spec);
  }
  // A split's settings without the split would be ignored.
  const char* split_only = spec.prefill_workers != 1              ? "prefill_workers"
                           : spec.decode_workers != 1             ? "decode_workers"
                           : !spec.prefill_cluster.empty()        ? "prefill_cluster"
                           : spec.prefill_redundant_experts       ? "prefill_redundant_experts"
                           : !spec.prefill_shared_experts.empty() ? "prefill_shared_experts"
                           : spec.kv_transfer != "after-prefill"  ? "kv_transfer"
                                                                  : nullptr;
  if (split_only) {
    return FieldError(split_only,
                      fmt::format("`{}` sets a disaggregated deployment's pools: give "
                                  "`prefill_layout` and `decode_layout` too, or drop it",
                                  split_only));
  }
  SW_ASSIGN_OR_RETURN(Layout layout, ParsePoolLayout(spec.layout, "layout"));
  ServingOptions aggregated = options;
  if (spec.ep) aggregated.perf.ep = *spec.ep;
  return Deployment::Aggregated(model,
                                aggregated.PoolFor(PoolRole::kAggregated, layout, 1, cluster));
}

}  // namespace shardwise::api
