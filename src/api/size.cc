#include "shardwise/api/size.h"

#include <fmt/format.h>

#include "shardwise/deploy/deployment.h"

namespace shardwise::api {
namespace {

// The Parallelism web guide's rule when the model states no context: weights + ~80% for KV.
constexpr double kGuideKvAllowance = 1.8;

}  // namespace

StatusOr<SizeReport> Size(const Catalog& catalog, const SizeRequest& r) {
  SizeReport rep;
  SW_ASSIGN_OR_RETURN(rep.model, catalog.Model(r.model));
  if (!r.cluster.empty() && !r.gpu.empty()) {
    return FieldError("gpu", "give `cluster` or its alias `gpu`, not both");
  }
  SizingRequest& req = rep.request;
  if (!r.gpu.empty()) {
    SW_ASSIGN_OR_RETURN(rep.gpu, catalog.Gpu(r.gpu));
  } else {
    ClusterRef ref;
    ref.name = r.cluster.empty() ? "dgx-h100" : r.cluster;
    SW_ASSIGN_OR_RETURN(const ClusterSpec cluster, catalog.Cluster(ref));
    rep.gpu = cluster.gpu;
    req.gpus_per_node = cluster.GpusPerNode();
  }
  if (r.dtype.empty()) {
    req.weight_dtype = rep.model.native_dtype;
    req.weight_formats = rep.model.native_formats;
    rep.weight_formats = rep.model.native_formats.Describe();
  } else {
    StatusOr<Dtype> d = ParseDtype(r.dtype);
    if (!d.ok()) return d.status().WithField("dtype");
    req.weight_dtype = *d;
    rep.weight_formats = std::string(DtypeName(*d));
  }
  if (r.kv_dtype.empty()) {
    req.kv_dtype = req.weight_dtype == Dtype::kFp8 ? Dtype::kFp8 : Dtype::kBf16;
  } else {
    StatusOr<Dtype> d = ParseDtype(r.kv_dtype);
    if (!d.ok()) return d.status().WithField("kv_dtype");
    req.kv_dtype = *d;
  }
  SW_RETURN_IF_ERROR(CheckKvFormat(req.kv_dtype, rep.gpu));
  const bool exact = r.context || r.concurrency;
  if (exact && r.kv_alloc) {
    return FieldError("kv_alloc", "give `kv_alloc`, or `context` with `concurrency`, not both");
  }
  if (exact && (!r.context || !r.concurrency)) {
    return FieldError(r.context ? "concurrency" : "context",
                      "`context` and `concurrency` go together: give both (e.g. `context` 8192 "
                      "and `concurrency` 32)");
  }
  if (exact && (*r.context < 1 || *r.concurrency < 1)) {
    return FieldError(*r.context < 1 ? "context" : "concurrency",
                      fmt::format("`context` and `concurrency` must be at least 1 (got {} and "
                                  "{})",
                                  *r.context, *r.concurrency));
  }
  const int64_t limit = rep.model.max_position_embeddings;
  if (exact && limit > 0 && *r.context > limit) {
    return FieldError("context", fmt::format("`context` {} exceeds {}'s context of {} tokens "
                                             "(max_position_embeddings)",
                                             *r.context, rep.model.name, limit));
  }
  if (r.kv_alloc) {
    req.kv_allowance = r.kv_alloc;
  } else if (exact) {
    req.context_tokens = *r.context;
    req.concurrency = *r.concurrency;
  } else if (limit > 0) {
    req.context_tokens = limit;  // one request as long as the model accepts
    req.concurrency = 1;
  } else {
    req.kv_allowance = kGuideKvAllowance;
  }
  req.usable_fraction = r.gpu_memory_utilization;
  SW_ASSIGN_OR_RETURN(rep.result, SizeDeployment(rep.model, rep.gpu, req));
  return rep;
}

}  // namespace shardwise::api
