#include "shardwise/api/collectives.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "shardwise/common/input_policy.h"

namespace shardwise::api {

std::string SweepReport::GroupDescription() const {
  std::string out;
  for (int d = 0; d < group.NumLevels(); ++d) {
    if (!group.Spans(d)) continue;
    if (!out.empty()) out += " x ";
    out += fmt::format("{} {}", group.ChildrenTouched(d), cluster.levels[d].name);
  }
  return out.empty() ? "1 GPU" : out;
}

StatusOr<SweepReport> Sweep(const ClusterSpec& c, const SweepRequest& r) {
  SweepReport rep;
  rep.cluster = c;
  StatusOr<CollectiveOp> op = ParseCollectiveOp(r.op);
  if (!op.ok()) return op.status().WithField("op");
  rep.base.op = *op;
  StatusOr<CollectiveAlgorithm> algorithm = ParseCollectiveAlgorithm(r.algorithm);
  if (!algorithm.ok()) return algorithm.status().WithField("algo");
  rep.base.algorithm = *algorithm;
  SW_ASSIGN_OR_RETURN(rep.group, PlaceGroup(c, c.num_gpus));
  if (rep.group.size < 2) {
    return FieldError("gpus", "a collective needs at least 2 GPUs; raise `gpus` or `nodes`");
  }
  if (rep.base.op == CollectiveOp::kAllToAllTopK) {
    if (r.topk < 1 || r.topk > rep.group.size) {
      return FieldError("topk", fmt::format("`topk` is {}: each token goes to 1 to {} of the {} "
                                            "GPUs of the group",
                                            r.topk, rep.group.size, rep.group.size));
    }
    rep.base.topk = r.topk;
  }
  SW_RETURN_IF_ERROR(CheckAlgorithm(c, rep.group, rep.base.op, rep.base.algorithm));
  if (!(r.min_bytes >= 1 && r.min_bytes <= r.max_bytes && std::isfinite(r.max_bytes))) {
    return FieldError("min_bytes",
                      "`min_bytes` must be at least 1 and must not exceed `max_bytes`");
  }
  if (!(r.factor >= 1.01 && r.factor <= 1024)) {
    return FieldError("factor",
                      fmt::format("`factor` must be between 1.01 and 1024, got {:g}", r.factor));
  }
  for (double bytes = r.min_bytes; bytes <= r.max_bytes * (1 + 1e-12); bytes *= r.factor) {
    SweepRow row;
    row.request = rep.base;
    row.request.bytes =
        std::max(std::floor(bytes / kNcclTestsElementBytes) * kNcclTestsElementBytes,
                 kNcclTestsElementBytes);
    row.cost = PredictCollective(c, rep.group, row.request);
    row.bound_by = row.cost.binding_level >= 0 ? c.levels[row.cost.binding_level].name : "-";
    rep.rows.push_back(row);
  }
  return rep;
}

bool IsEpOp(const std::string& op) { return op == "ep-dispatch" || op == "ep-combine"; }

StatusOr<EpReport> EpExchange(const ClusterSpec& c, const EpRequest& request) {
  EpReport rep;
  rep.cluster = c;
  rep.request = request;
  EpRequest& o = rep.request;
  EpDispatchRequest r;
  StatusOr<EpAlgorithm> algorithm = ParseEpAlgorithm(o.algorithm);
  if (!algorithm.ok()) return algorithm.status().WithField("algo");
  r.algorithm = *algorithm;
  rep.asked = r.algorithm != EpAlgorithm::kAuto;
  if (!(std::isfinite(o.tokens) && o.tokens >= 1 && o.tokens <= 1e7) ||
      o.tokens != std::floor(o.tokens)) {
    return FieldError("tokens", fmt::format("`tokens` must be a whole number between 1 and "
                                            "10,000,000, got {:g}",
                                            o.tokens));
  }
  if (o.hidden < 1 || o.hidden > 1'000'000) {
    return FieldError("hidden", "`hidden` must be between 1 and 1,000,000");
  }
  if (o.experts < 1 || o.experts > 1'000'000) {
    return FieldError("experts", "`experts` must be between 1 and 1,000,000");
  }
  if (o.dtype.empty()) o.dtype = o.op == "ep-dispatch" ? "fp8" : "bf16";
  if (o.dtype != "fp8" && o.dtype != "bf16") {
    return FieldError("dtype", fmt::format("`dtype` '{}' for {}: use fp8 or bf16", o.dtype, o.op));
  }
  r.dtype = o.dtype == "fp8" ? Dtype::kFp8 : Dtype::kBf16;
  r.tokens_per_gpu = o.tokens;
  r.hidden = o.hidden;
  r.routing = {o.experts, o.topk, o.groups, o.topk_groups};
  SW_RETURN_IF_ERROR(ValidateEpRouting(r.routing));
  SW_ASSIGN_OR_RETURN(rep.group, PlaceGroup(c, c.num_gpus));
  if (rep.group.size < 2) {
    return FieldError("gpus", "an EP group needs at least 2 GPUs; raise `gpus` or `nodes`");
  }
  SW_ASSIGN_OR_RETURN(const EpKernelProfile profile, LoadEpKernelProfile());
  rep.chosen = PredictEpDispatch(c, rep.group, profile, r);
  rep.destinations =
      ExpectedEpDestinations(r.routing, rep.group.size, rep.group.members_per_unit[0]);
  for (EpAlgorithm a : {EpAlgorithm::kFlat, EpAlgorithm::kNodeDedup, EpAlgorithm::kLowLatency}) {
    EpDispatchRequest one = r;
    one.algorithm = a;
    rep.candidates.push_back(PredictEpDispatch(c, rep.group, profile, one));
  }
  return rep;
}

StatusOr<ImportReport> Import(const ClusterSpec& c, const ImportRequest& r) {
  ImportReport rep;
  rep.cluster = c;
  SW_ASSIGN_OR_RETURN(const std::string text, ReadBoundedFile(r.log_path, kNcclLogInput));
  SW_ASSIGN_OR_RETURN(rep.log, ParseNcclTests(text, r.log_path));
  if (!r.op.empty() || !rep.log.inferred_op) {
    StatusOr<CollectiveOp> op = ParseCollectiveOp(r.op.empty() ? "all-reduce" : r.op);
    if (!op.ok()) return op.status().WithField("op");
    rep.op = *op;
  } else {
    rep.op = *rep.log.inferred_op;
  }
  SW_ASSIGN_OR_RETURN(rep.fit, FitNcclTests(c, rep.log, rep.op, r.log_path));
  for (const FitPoint& p : rep.fit.points) {
    if (p.bytes >= 1 << 20) {
      rep.max_abs_error_from_1mb =
          std::max(rep.max_abs_error_from_1mb, std::fabs(p.predicted_s / p.measured_s - 1));
    }
  }
  // When the fitted level does not bind the largest message, the fit says little about it.
  SW_ASSIGN_OR_RETURN(const ClusterSpec fitted, ApplyProfile(c, rep.fit.profile));
  SW_ASSIGN_OR_RETURN(const GroupShape g,
                      PlaceGroup(fitted, rep.log.ranks > 0 ? rep.log.ranks : c.num_gpus));
  CollectiveRequest largest;
  largest.op = rep.op;
  largest.bytes = rep.fit.points.back().bytes;
  const CollectiveCost cost = PredictCollective(fitted, g, largest);
  if (cost.binding_level >= 0 && fitted.levels[cost.binding_level].name != rep.fit.profile.level) {
    rep.binding_level = fitted.levels[cost.binding_level].name;
  }
  return rep;
}

nlohmann::json ToJson(const SweepReport& rep) {
  nlohmann::json rows = nlohmann::json::array();
  for (const SweepRow& row : rep.rows) {
    rows.push_back({{"bytes", row.request.bytes},
                    {"count", row.request.bytes / kNcclTestsElementBytes},
                    {"time_s", row.cost.time_s},
                    {"latency_s", row.cost.latency_s},
                    {"algbw_bytes_per_s", row.cost.algbw_bytes_per_s},
                    {"busbw_bytes_per_s", row.cost.busbw_bytes_per_s},
                    {"algorithm", AlgorithmName(row.cost.algorithm)},
                    {"bound_by", row.bound_by}});
  }
  const bool topk = rep.base.op == CollectiveOp::kAllToAllTopK;
  return {{"command", "collectives"},
          {"cluster", rep.cluster.name},
          {"gpus", rep.group.size},
          {"op", OpName(rep.base.op)},
          {"topk", topk ? nlohmann::json(rep.base.topk) : nlohmann::json(nullptr)},
          {"rows", rows}};
}

namespace {

nlohmann::json EpCostJson(const EpDispatchCost& cost) {
  return {{"algorithm", EpAlgorithmName(cost.algorithm)},
          {"time_s", cost.time_s},
          {"latency_s", cost.latency_s},
          {"bottleneck_link", cost.bottleneck_link},
          {"bottleneck_bytes_per_s", cost.bottleneck_bytes_per_s},
          {"nvlink_bytes_per_s", cost.nvlink_bytes_per_s},
          {"rdma_bytes_per_s", cost.rdma_bytes_per_s},
          {"nvlink_wire_bytes", cost.scale_up_wire_bytes},
          {"rdma_wire_bytes", cost.scale_out_wire_bytes},
          {"sms", cost.sms}};
}

}  // namespace

nlohmann::json ToJson(const EpReport& rep) {
  nlohmann::json out = EpCostJson(rep.chosen);
  out["command"] = "collectives";
  out["op"] = rep.request.op;
  out["cluster"] = rep.cluster.name;
  out["gpus"] = rep.group.size;
  out["token_bytes"] = rep.chosen.token_bytes;
  out["dtype"] = rep.request.dtype;
  out["destinations"] = {{"nodes", rep.destinations.nodes},
                         {"remote_nodes", rep.destinations.remote_nodes},
                         {"ranks", rep.destinations.ranks}};
  out["candidates"] = nlohmann::json::array();
  for (const EpDispatchCost& cost : rep.candidates) out["candidates"].push_back(EpCostJson(cost));
  return out;
}

nlohmann::json ToJson(const ImportReport& rep, const std::string& profile_file) {
  nlohmann::json points = nlohmann::json::array();
  for (const FitPoint& p : rep.fit.points) {
    points.push_back({{"bytes", p.bytes},
                      {"measured_s", p.measured_s},
                      {"predicted_s", p.predicted_s},
                      {"error", p.predicted_s / p.measured_s - 1}});
  }
  return {{"profile", ProfileToJson(rep.fit.profile)},
          {"profile_file",
           profile_file.empty() ? nlohmann::json(nullptr) : nlohmann::json(profile_file)},
          {"points", points},
          {"max_abs_error_from_1mb", rep.max_abs_error_from_1mb}};
}

}  // namespace shardwise::api
