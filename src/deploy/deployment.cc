#include "shardwise/deploy/deployment.h"

#include <fmt/format.h>

#include "shardwise/perf/moe.h"

namespace shardwise {
namespace {

// The pool against the model: its layout's degrees, its expert copies, its worker count.
Status CheckPool(const ModelSpec& model, const Pool& pool) {
  if (pool.workers < 1 || pool.workers > kMaxPoolWorkers) {
    return FieldError("workers", fmt::format("`workers` must be between 1 and {}, got {}",
                                             kMaxPoolWorkers, pool.workers));
  }
  if (pool.max_batch < 1 || pool.max_batch > 10'000'000) {
    return FieldError(
        "max_batch",
        fmt::format("`max_batch` must be between 1 and 10,000,000, got {}", pool.max_batch));
  }
  SW_RETURN_IF_ERROR(CheckKvFormat(pool.perf.kv_dtype, pool.cluster.gpu));
  if (pool.perf.redundant_experts > 0 && pool.layout.ep == 1) {
    return FieldError(
        "redundant_experts",
        fmt::format("`redundant_experts` ({}) places expert copies over an EP group, but {} has "
                    "none; use a layout with ep > 1 (e.g. dp8ep8)",
                    pool.perf.redundant_experts, pool.layout.ToString()));
  }
  if (pool.layout.GathersTokensForExperts() &&
      (pool.perf.ep.algorithm != EpAlgorithm::kFlat || pool.perf.ep.two_batch_overlap)) {
    return FieldError(
        "ep_algorithm",
        fmt::format("{} splits experts over attention-DP ranks (etp {}), which gather their "
                    "tokens for the experts: DeepEP kernels and two-batch overlap need etp 1; "
                    "drop `ep_algorithm` and `overlap`, or use dp{}ep{}",
                    pool.layout.ToString(), pool.layout.etp, pool.layout.dp,
                    pool.layout.ep * pool.layout.etp));
  }
  // Shared experts placed as routed ones count among the experts the EP group divides.
  if (pool.perf.shared_experts_routed && pool.layout.ep > 1) {
    SW_ASSIGN_OR_RETURN(const ModelSpec routed, SharedExpertsAsRouted(model));
    return ValidateLayout(pool.layout, routed, pool.perf.redundant_experts).WithField("layout");
  }
  return ValidateLayout(pool.layout, model, pool.perf.redundant_experts).WithField("layout");
}

Status InPool(const Status& s, std::string_view pool) {
  if (s.ok()) return s;
  return Status(s.code(), fmt::format("the {} pool: {}", pool, s.message()),
                s.field().empty() ? std::string() : fmt::format("{}.{}", pool, s.field()));
}

Status NeedsGpus(const std::string& what, int64_t gpus, const ClusterSpec& cluster) {
  if (gpus <= cluster.num_gpus) return Status();
  return FailedPrecondition(
      fmt::format(
          "{} needs {} GPUs; cluster '{}' has {} (more `nodes`, or fewer workers or a smaller "
          "layout)",
          what, gpus, cluster.name, cluster.num_gpus),
      "nodes");
}

}  // namespace

// Whether `gpu` can hold a KV cache in `kv`: the engines store it in 16 or 8 bits on any GPU
// (8-bit on GPUs without fp8 tensor cores as a storage format, vLLM's fp8 KV on Ampere), and in
// NVFP4 only on GPUs with fp4 tensor cores (TensorRT-LLM's NVFP4 KV cache on Blackwell); no
// engine keeps it in int4 or mxfp4.
Status CheckKvFormat(Dtype kv, const GpuSpec& gpu) {
  if (kv == Dtype::kInt4 || kv == Dtype::kMxfp4) {
    return FieldError("kv_dtype", fmt::format("no serving engine keeps the KV cache in {}; use "
                                              "`kv_dtype` fp8 or bf16",
                                              DtypeName(kv)));
  }
  if (kv == Dtype::kFp4 && !gpu.Supports(Dtype::kFp4)) {
    return FailedPrecondition(fmt::format("{} has no fp4 tensor cores, so no engine keeps its KV "
                                          "cache in fp4 (NVFP4 KV needs Blackwell); use "
                                          "`kv_dtype` fp8",
                                          gpu.name),
                              "kv_dtype");
  }
  return Status();
}

std::string_view PoolRoleName(PoolRole role) {
  switch (role) {
    case PoolRole::kAggregated:
      return "aggregated";
    case PoolRole::kPrefill:
      return "prefill";
    case PoolRole::kDecode:
      return "decode";
  }
  return "?";
}

AdmissionPolicy EngineAdmission(const EngineProfile& engine) {
  if (engine.no_evict_admission) return NoEvictAdmission{};
  return MaxUtilizationAdmission{};
}

SchedulePolicy EngineSchedule(const EngineProfile& engine) {
  if (!engine.mixed_prefill_decode) return PrefillFirstSchedule{};
  if (!engine.chunked_prefill) return WholePromptMixedSchedule{};
  return ChunkedMixedSchedule{};
}

Pool EnginePool(PoolRole role, const Layout& layout, int64_t workers, const ClusterSpec& cluster,
                const PerfOptions& perf, int64_t max_batch) {
  Pool p;
  p.role = role;
  p.layout = layout;
  p.workers = workers;
  p.cluster = cluster;
  p.perf = perf;
  p.max_batch = max_batch;
  p.admission = EngineAdmission(perf.engine);
  p.schedule = EngineSchedule(perf.engine);
  return p;
}

BatchPolicy Pool::Batch() const {
  const int64_t ranks = layout.AttentionDp();
  BatchPolicy b;
  // A disaggregated decode worker reserves each request's whole life at admission: a sequence it
  // preempted would be prefilled again there, from its whole prompt, by a worker sized for decode
  // steps (at 8,192-token prompts one preemption led to thousands, and a split given one more
  // prefill worker fell behind the rate its smaller split kept up with). TensorRT-LLM's decode
  // servers admit so by default; vLLM's and SGLang's decode sides allocate a transferred prompt's
  // KV before it arrives, and their room for its outputs is taken to be reserved alike (assumed).
  b.admission = role == PoolRole::kDecode ? AdmissionPolicy(NoEvictAdmission{}) : admission;
  b.schedule = schedule;
  b.max_batch = max_batch * ranks;
  b.max_batched_tokens = perf.max_batched_tokens * ranks;
  b.block_tokens = static_cast<int64_t>(perf.engine.kv_block_tokens);
  // Prefill workers run without it, as disaggregated deployments configure them (the profile's
  // source says where).
  b.plans_ahead = perf.engine.overlap_scheduler && role != PoolRole::kPrefill;
  return b;
}

double Pool::UsdPerHour() const {
  return static_cast<double>(Gpus()) * cluster.gpu.usd_per_gpu_hour;
}

double Pool::BoardPowerW() const { return static_cast<double>(Gpus()) * cluster.gpu.board_power_w; }

StatusOr<Deployment> Deployment::Aggregated(const ModelSpec& model, Pool pool) {
  pool.role = PoolRole::kAggregated;
  if (pool.workers != 1) {
    return FieldError("workers",
                      "an aggregated deployment has one worker: give its replicas as the layout's "
                      "data-parallel degree (dp4tp8 for four tp8 replicas)");
  }
  SW_RETURN_IF_ERROR(CheckPool(model, pool));
  SW_RETURN_IF_ERROR(NeedsGpus(pool.layout.ToString(), pool.Gpus(), pool.cluster));
  Deployment d;
  d.pools_.push_back(std::move(pool));
  return d;
}

StatusOr<Deployment> Deployment::Disaggregated(const ModelSpec& model, Pool prefill, Pool decode,
                                               KvTransferMode transfer, bool same_cluster) {
  prefill.role = PoolRole::kPrefill;
  decode.role = PoolRole::kDecode;
  SW_RETURN_IF_ERROR(InPool(CheckPool(model, prefill), "prefill"));
  SW_RETURN_IF_ERROR(InPool(CheckPool(model, decode), "decode"));
  Deployment d;
  d.transfer_ = transfer;
  d.same_cluster_ = same_cluster;
  d.pools_ = {std::move(prefill), std::move(decode)};
  if (same_cluster) {
    const std::string what = fmt::format("{} ({} prefill + {} decode)", d.ToString(),
                                         d.pools_[0].Gpus(), d.pools_[1].Gpus());
    SW_RETURN_IF_ERROR(NeedsGpus(what, d.gpus(), d.pools_[1].cluster));
  } else {
    SW_RETURN_IF_ERROR(
        InPool(NeedsGpus(d.pools_[0].layout.ToString(), d.pools_[0].Gpus(), d.pools_[0].cluster),
               "prefill"));
    SW_RETURN_IF_ERROR(
        InPool(NeedsGpus(d.pools_[1].layout.ToString(), d.pools_[1].Gpus(), d.pools_[1].cluster),
               "decode"));
  }
  return d;
}

int64_t Deployment::gpus() const {
  int64_t gpus = 0;
  for (const Pool& p : pools_) gpus += p.Gpus();
  return gpus;
}

double Deployment::UsdPerHour() const {
  double usd = 0;
  for (const Pool& p : pools_) usd += p.UsdPerHour();
  return usd;
}

double Deployment::BoardPowerW() const {
  double watts = 0;
  for (const Pool& p : pools_) {
    if (p.cluster.gpu.board_power_w <= 0) return 0;  // unknown for one pool: unknown
    watts += p.BoardPowerW();
  }
  return watts;
}

std::string Deployment::ToString() const {
  if (pools_.empty()) return "(none)";
  if (!disaggregated()) return pools_[0].layout.ToString();
  return fmt::format("{}P x {} + {}D x {}", pools_[0].workers, pools_[0].layout.ToString(),
                     pools_[1].workers, pools_[1].layout.ToString());
}

}  // namespace shardwise
