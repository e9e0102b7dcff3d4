#include "shardwise/collective/ep_dispatch.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "shardwise/catalog/embedded.h"
#include "shardwise/collective/cost_model.h"
#include "shardwise/common/json_fields.h"

namespace shardwise {
namespace {

constexpr const char* kProfilePath = "kernels/ep-dispatch.json";

// Probability that `draws` picks without replacement from a pool of `pool` avoid `avoid` items.
double MissProbability(double pool, double avoid, int64_t draws) {
  double p = 1.0;
  for (int64_t i = 0; i < draws; ++i) {
    const double left = pool - avoid - static_cast<double>(i);
    if (left <= 0) return 0.0;
    p *= left / (pool - static_cast<double>(i));
  }
  return p;
}

double LogChoose(double n, double k) {
  return std::lgamma(n + 1) - std::lgamma(k + 1) - std::lgamma(n - k + 1);
}

// Probability that a token reaches a unit (rank or node) holding `unit_experts` consecutive
// experts. The token first picks m of n groups, then k experts among the m groups' experts.
double TouchProbability(const EpRouting& r, double unit_experts) {
  const double n = static_cast<double>(r.groups);
  const double m = static_cast<double>(r.topk_groups);
  const double group_experts = static_cast<double>(r.experts) / n;
  const double pool = m * group_experts;
  if (unit_experts <= group_experts) {
    // The unit lies inside one group: reachable only when that group is picked.
    return m / n * (1.0 - MissProbability(pool, unit_experts, r.topk));
  }
  // The unit holds about g whole groups; c of them are picked (hypergeometric).
  const double g = std::min(n, std::round(unit_experts / group_experts));
  double p = 0;
  for (double c = std::max(0.0, m - (n - g)); c <= std::min(g, m); c += 1) {
    const double pc = std::exp(LogChoose(g, c) + LogChoose(n - g, m - c) - LogChoose(n, m));
    p += pc * (1.0 - MissProbability(pool, c * group_experts, r.topk));
  }
  return p;
}

double TokenBytes(const EpKernelProfile& p, int64_t hidden, Dtype dtype) {
  const double h = static_cast<double>(hidden);
  return dtype == Dtype::kFp8 ? h * (1.0 + p.fp8_scale_bytes_per_element)
                              : h * BytesPerElement(dtype);
}

// Slowest scale-out egress among the levels above the node that the group spans.
double ScaleOutBytesPerS(const ClusterSpec& c, const GroupShape& g) {
  double bw = 0;
  for (int d = 1; d < g.NumLevels(); ++d) {
    if (!g.Spans(d)) continue;
    const double level = c.PerGpuEgressBytesPerS(d);
    bw = bw == 0 ? level : std::min(bw, level);
  }
  return bw;
}

struct Shape {
  double tokens = 0;
  double token_bytes = 0;
  double ranks = 0;           // EP group size
  double ranks_per_node = 0;  // members inside one node
  EpDestinations dest;
};

// Fills the per-link wire bytes and the DeepEP-convention rates, and times a kernel whose
// links run concurrently.
EpDispatchCost Kernel(const ClusterSpec& c, const GroupShape& g, const EpKernelProfile& p,
                      EpAlgorithm algorithm, double latency_s, double up_bytes, double out_bytes,
                      double nvlink_counted, double rdma_counted) {
  EpDispatchCost cost;
  cost.algorithm = algorithm;
  cost.latency_s = latency_s;
  cost.scale_up_wire_bytes = up_bytes;
  cost.scale_out_wire_bytes = out_bytes;
  const double up_s =
      up_bytes > 0 ? up_bytes / (c.PerGpuEgressBytesPerS(0) * p.scale_up_efficiency) : 0.0;
  const double out_bw = ScaleOutBytesPerS(c, g);
  const double out_s =
      out_bytes > 0 && out_bw > 0 ? out_bytes / (out_bw * p.scale_out_efficiency) : 0.0;
  cost.time_s = latency_s + std::max(up_s, out_s);
  cost.nvlink_bytes_per_s = nvlink_counted / cost.time_s;
  cost.rdma_bytes_per_s = out_bytes > 0 ? rdma_counted / cost.time_s : 0.0;
  const bool rdma_binds = out_s > up_s;
  cost.bottleneck_link = rdma_binds ? "rdma" : "nvlink";
  cost.bottleneck_bytes_per_s = rdma_binds ? cost.rdma_bytes_per_s : cost.nvlink_bytes_per_s;
  cost.sms = algorithm == EpAlgorithm::kLowLatency ? p.low_latency_sms : p.normal_sms;
  return cost;
}

EpDispatchCost Flat(const ClusterSpec& c, const GroupShape& g, const Shape& s) {
  // NCCL all-to-all(v): every rank's buffer holds its tokens once per distinct destination
  // rank, spread evenly over the ranks; the cluster's NCCL calibration prices it.
  const double buffer = s.tokens * s.token_bytes * s.dest.ranks;
  CollectiveRequest r;
  r.op = CollectiveOp::kAllToAll;
  r.bytes = buffer;
  const CollectiveCost nccl = PredictCollective(c, g, r);
  EpDispatchCost cost;
  cost.algorithm = EpAlgorithm::kFlat;
  cost.time_s = nccl.time_s;
  cost.latency_s = nccl.latency_s;
  cost.scale_up_wire_bytes = buffer * (s.ranks_per_node - 1) / s.ranks;
  cost.scale_out_wire_bytes = buffer * (s.ranks - s.ranks_per_node) / s.ranks;
  cost.nvlink_bytes_per_s = buffer / cost.time_s;
  cost.rdma_bytes_per_s =
      cost.scale_out_wire_bytes > 0 ? s.tokens * s.token_bytes * s.dest.nodes / cost.time_s : 0.0;
  const bool rdma_binds = nccl.binding_level > 0;
  cost.bottleneck_link = rdma_binds ? "rdma" : "nvlink";
  cost.bottleneck_bytes_per_s = rdma_binds ? cost.rdma_bytes_per_s : cost.nvlink_bytes_per_s;
  cost.sms = 0;  // NCCL's channels: counted in the engine's kernels, not here
  return cost;
}

}  // namespace

std::string_view EpAlgorithmName(EpAlgorithm a) {
  switch (a) {
    case EpAlgorithm::kAuto:
      return "auto";
    case EpAlgorithm::kFlat:
      return "flat";
    case EpAlgorithm::kNodeDedup:
      return "node-dedup";
    case EpAlgorithm::kLowLatency:
      return "low-latency";
  }
  return "?";
}

StatusOr<EpAlgorithm> ParseEpAlgorithm(std::string_view text) {
  for (EpAlgorithm a : {EpAlgorithm::kAuto, EpAlgorithm::kFlat, EpAlgorithm::kNodeDedup,
                        EpAlgorithm::kLowLatency}) {
    if (text == EpAlgorithmName(a)) return a;
  }
  return Error(
      fmt::format("unknown EP algorithm '{}'; use auto, flat, node-dedup or low-latency", text));
}

StatusOr<EpKernelProfile> LoadEpKernelProfile() {
  const std::optional<std::string> text = catalog::ReadEmbedded(kProfilePath);
  if (!text) return Error(fmt::format("{} is missing from the built-in catalog", kProfilePath));
  SW_ASSIGN_OR_RETURN(nlohmann::json json, ParseJsonText(*text, kProfilePath));
  const JsonObject o{json, kProfilePath};
  EpKernelProfile p;
  SW_ASSIGN_OR_RETURN(p.scale_up_efficiency, o.Number("scale_up_efficiency"));
  SW_ASSIGN_OR_RETURN(p.scale_out_efficiency, o.Number("scale_out_efficiency"));
  SW_ASSIGN_OR_RETURN(p.normal_latency_s, o.NumberOr("normal_latency_s", 0));
  SW_ASSIGN_OR_RETURN(p.low_latency_latency_s, o.NumberOr("low_latency_latency_s", 0));
  SW_ASSIGN_OR_RETURN(p.normal_sms, o.IntOr("normal_sms", 0));
  SW_ASSIGN_OR_RETURN(p.low_latency_sms, o.IntOr("low_latency_sms", 0));
  SW_ASSIGN_OR_RETURN(p.low_latency_max_tokens_per_rank,
                      o.NumberOr("low_latency_max_tokens_per_rank", 0));
  SW_ASSIGN_OR_RETURN(p.fp8_scale_bytes_per_element, o.NumberOr("fp8_scale_bytes_per_element", 0));
  if (p.scale_up_efficiency > 1 || p.scale_out_efficiency > 1) {
    return Error(fmt::format("{}: efficiencies must be at most 1", kProfilePath));
  }
  if (json.contains("sources") && json["sources"].is_object()) {
    for (const auto& [key, value] : json["sources"].items()) {
      if (value.is_string()) p.sources[key] = value.get<std::string>();
    }
  }
  return p;
}

Status ValidateEpRouting(const EpRouting& r) {
  if (r.experts < 1) return Error("EP routing needs at least one expert");
  if (r.topk < 1 || r.topk > r.experts) {
    return Error(
        fmt::format("--topk ({}) must be between 1 and the {} experts", r.topk, r.experts));
  }
  if (r.groups < 1 || r.experts % r.groups != 0) {
    return Error(fmt::format("--groups ({}) must divide the {} experts", r.groups, r.experts));
  }
  if (r.topk_groups < 1 || r.topk_groups > r.groups) {
    return Error(fmt::format("--topk-groups ({}) must be between 1 and --groups ({})",
                             r.topk_groups, r.groups));
  }
  if (r.topk > r.topk_groups * (r.experts / r.groups)) {
    return Error(
        fmt::format("--topk ({}) exceeds the {} experts in {} of {} groups; raise "
                    "--topk-groups",
                    r.topk, r.topk_groups * (r.experts / r.groups), r.topk_groups, r.groups));
  }
  return Status();
}

EpDestinations ExpectedEpDestinations(const EpRouting& r, int64_t ranks, int64_t ranks_per_node) {
  const double experts = static_cast<double>(r.experts);
  const double n_ranks = static_cast<double>(ranks);
  const double nodes = n_ranks / static_cast<double>(ranks_per_node);
  EpDestinations d;
  const double node_p = TouchProbability(r, experts / nodes);
  d.nodes = nodes * node_p;
  d.remote_nodes = d.nodes - node_p;
  d.ranks = n_ranks * TouchProbability(r, experts / n_ranks);
  return d;
}

EpDispatchCost PredictEpDispatch(const ClusterSpec& c, const GroupShape& g,
                                 const EpKernelProfile& p, const EpDispatchRequest& req) {
  SW_CHECK(ValidateEpRouting(req.routing).ok(), "PredictEpDispatch: bad routing");
  EpDispatchCost none;
  none.token_bytes = TokenBytes(p, req.hidden, req.dtype);
  if (g.size <= 1 || req.tokens_per_gpu <= 0) {
    none.algorithm = req.algorithm == EpAlgorithm::kAuto ? EpAlgorithm::kFlat : req.algorithm;
    return none;
  }
  Shape s;
  s.tokens = req.tokens_per_gpu;
  s.token_bytes = none.token_bytes;
  s.ranks = static_cast<double>(g.size);
  s.ranks_per_node = static_cast<double>(g.members_per_unit[0]);
  s.dest = ExpectedEpDestinations(req.routing, g.size, g.members_per_unit[0]);
  const double payload = s.tokens * s.token_bytes;
  const double k = static_cast<double>(req.routing.topk);

  std::vector<EpDispatchCost> options;
  auto want = [&](EpAlgorithm a) {
    return req.algorithm == EpAlgorithm::kAuto || req.algorithm == a;
  };
  if (want(EpAlgorithm::kFlat)) options.push_back(Flat(c, g, s));
  const bool dedup_allowed = req.algorithm == EpAlgorithm::kNodeDedup || !req.cuda_graph;
  if (want(EpAlgorithm::kNodeDedup) && dedup_allowed) {
    // One RDMA copy per remote destination node; there the receiving GPU forwards to the
    // destination ranks over NVLink (all but the 1 / ranks_per_node share that is its own).
    options.push_back(Kernel(c, g, p, EpAlgorithm::kNodeDedup, p.normal_latency_s,
                             payload * s.dest.ranks * (s.ranks_per_node - 1) / s.ranks_per_node,
                             payload * s.dest.remote_nodes, payload * s.dest.ranks,
                             payload * s.dest.nodes));
  }
  // `auto` runs DeepSeek's and SGLang's rule (`--deepep-mode auto`): the normal kernels for
  // prompts, the low-latency ones for decode steps (those in CUDA graphs) of at most the tokens
  // a rank their buffers hold. Asked for by name they run anywhere.
  const double sent = req.tokens_sent_per_rank > 0 ? req.tokens_sent_per_rank : s.tokens;
  const bool low_latency_allowed = req.algorithm == EpAlgorithm::kLowLatency ||
                                   (req.cuda_graph && (p.low_latency_max_tokens_per_rank <= 0 ||
                                                       sent <= p.low_latency_max_tokens_per_rank));
  if (want(EpAlgorithm::kLowLatency) && low_latency_allowed) {
    // One copy per selected expert, spread evenly over the ranks: peers in the node over
    // NVLink, the rest over RDMA. DeepEP's test counts every per-expert copy.
    options.push_back(Kernel(c, g, p, EpAlgorithm::kLowLatency, p.low_latency_latency_s,
                             payload * k * (s.ranks_per_node - 1) / s.ranks,
                             payload * k * (s.ranks - s.ranks_per_node) / s.ranks, payload * k,
                             payload * k));
  }
  EpDispatchCost best = options.front();
  for (const EpDispatchCost& o : options) {
    if (o.time_s < best.time_s) best = o;
  }
  best.token_bytes = s.token_bytes;
  return best;
}

}  // namespace shardwise
