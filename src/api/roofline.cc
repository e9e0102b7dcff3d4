#include "shardwise/api/roofline.h"

namespace shardwise::api {
namespace {

nlohmann::json CriticalJson(const CriticalSizes& c) {
  return {{"bandwidth_bytes_per_s", c.bandwidth_bytes_per_s},
          {"dp_tokens_per_gpu", c.dp_tokens_per_gpu},
          {"max_tp", c.max_tp},
          {"ep_min_expert_ffn", c.ep_min_expert_ffn}};
}

}  // namespace

StatusOr<RooflineReport> RooflineOf(const Catalog& catalog, const RooflineRequest& r) {
  RooflineReport rep;
  rep.request = r;
  SW_ASSIGN_OR_RETURN(rep.model, catalog.Model(r.model));
  SW_ASSIGN_OR_RETURN(rep.gpu, catalog.Gpu(r.gpu));
  StatusOr<Dtype> dtype = ParseDtype(r.dtype);
  if (!dtype.ok()) return dtype.status().WithField("dtype");
  StatusOr<Dtype> kv_dtype = ParseDtype(r.kv_dtype);
  if (!kv_dtype.ok()) return kv_dtype.status().WithField("kv_dtype");
  if (r.context < 0 || r.context > 10'000'000) {
    return FieldError("context", "`context` must be between 0 and 10,000,000");
  }
  if (r.gpus_per_node < 1 || r.gpus_per_node > 1024) {
    return FieldError("gpus_per_node", "`gpus_per_node` must be between 1 and 1024");
  }
  rep.roofline = ComputeRoofline(rep.model, rep.gpu, *dtype, *kv_dtype, r.context, r.gpus_per_node);
  return rep;
}

nlohmann::json ToJson(const RooflineReport& rep) {
  const Roofline& r = rep.roofline;
  nlohmann::json points = nlohmann::json::array();
  for (const RooflinePoint& p : r.points) {
    points.push_back({{"batch", p.batch},
                      {"arithmetic_intensity", p.intensity},
                      {"attainable_flops_per_s", p.attainable_flops_per_s},
                      {"compute_bound", p.compute_bound}});
  }
  return {{"model", rep.model.name},
          {"gpu", rep.gpu.name},
          {"compute_dtype", DtypeName(r.compute_dtype)},
          {"ridge_flops_per_byte", r.ridge_flops_per_byte},
          {"sweet_spot_batch", r.sweet_spot_batch},
          {"compute_bound_batch", r.compute_bound_batch},
          {"points", points},
          {"intra_node", CriticalJson(r.intra_node)},
          {"inter_node", CriticalJson(r.inter_node)},
          {"nic_bytes_per_s", rep.gpu.nic_bytes_per_s},
          {"gpus_per_node", rep.request.gpus_per_node},
          {"ep_degree", r.ep_degree}};
}

}  // namespace shardwise::api
