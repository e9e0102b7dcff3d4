// A deployment: how a model is served on GPUs. Aggregated: one pool whose replicas each prefill
// and decode (continuous batching). Disaggregated: a prefill pool and a decode pool, each
// `workers` instances of its own layout on its own GPUs (possibly another GPU type), each
// request's KV cache sent from its prefill worker to a decode worker (DistServe, Splitwise;
// NVIDIA Dynamo, SGLang and vLLM deploy it as xPyD). A pool carries everything that decides what
// it does: its layout and worker count, its cluster, the formats and engine profile of the step
// model, and the engine's scheduler settings (batch limit, admission, schedule), which are the
// settings the launch-config emitters write. plan and recommend produce deployments; explain,
// simulate, price, report and emit consume them. Value type; thread-compatible.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "shardwise/common/status.h"
#include "shardwise/deploy/policy.h"
#include "shardwise/hw/cluster.h"
#include "shardwise/layout/layout.h"
#include "shardwise/model/model_spec.h"
#include "shardwise/perf/kv_transfer.h"
#include "shardwise/perf/options.h"

namespace shardwise {

enum class PoolRole { kAggregated, kPrefill, kDecode };
std::string_view PoolRoleName(PoolRole role);

// Most workers of one pool (far above any cluster the catalog describes).
inline constexpr int64_t kMaxPoolWorkers = 1'000'000;

struct Pool {
  PoolRole role = PoolRole::kAggregated;
  Layout layout;
  int64_t workers = 1;  // instances of the layout
  ClusterSpec cluster;  // the GPUs (and network) the pool runs on
  PerfOptions perf;     // formats, MoE options, engine profile, token budget per attention rank
  // The engine's scheduler: sequences running at once per attention rank (max_num_seqs, as
  // engines apply it per DP attention rank), KV admission, and how prompts join iterations.
  int64_t max_batch = 2048;
  AdmissionPolicy admission = NoEvictAdmission{};
  SchedulePolicy schedule = ChunkedMixedSchedule{};

  int64_t Gpus() const { return workers * layout.gpus(); }
  // Independent schedulers (replicas) in the pool: each worker's layout may hold several.
  int64_t Replicas() const { return workers * layout.Replicas(); }
  // One replica's batching: max_batch and the token budget per attention rank, times its
  // attention-DP ranks.
  BatchPolicy Batch() const;
  double UsdPerHour() const;   // all its GPUs at the cluster's price
  double BoardPowerW() const;  // all its GPUs at their rated board power (GpuSpec)
};

// Whether `gpu` can hold a KV cache in `kv` (fp4 only with fp4 tensor cores; never int4 or
// mxfp4); errors name "kv_dtype".
Status CheckKvFormat(Dtype kv, const GpuSpec& gpu);

// The scheduler an engine profile runs by default: its admission and its schedule.
AdmissionPolicy EngineAdmission(const EngineProfile& engine);
SchedulePolicy EngineSchedule(const EngineProfile& engine);

// A pool of `workers` x `layout` on `cluster` with `perf`, running its engine profile's own
// scheduler with `max_batch` sequences per attention rank.
Pool EnginePool(PoolRole role, const Layout& layout, int64_t workers, const ClusterSpec& cluster,
                const PerfOptions& perf, int64_t max_batch);

class Deployment {
 public:
  Deployment() = default;  // empty; use the factories
  // Validates the pool against the model (the layout's degrees, expert copies) and its cluster
  // (enough GPUs). An aggregated pool has one worker: its replicas are its layout's data-parallel
  // degree. Errors name the field: "layout", "redundant_experts".
  static StatusOr<Deployment> Aggregated(const ModelSpec& model, Pool pool);
  // `same_cluster`: both pools share one cluster, whose GPUs must hold both (the KV then moves
  // over its fabric); otherwise each pool's cluster is its own. Errors name "prefill.<field>" or
  // "decode.<field>".
  static StatusOr<Deployment> Disaggregated(const ModelSpec& model, Pool prefill, Pool decode,
                                            KvTransferMode transfer, bool same_cluster);

  bool disaggregated() const { return pools_.size() == 2; }
  std::span<const Pool> pools() const { return pools_; }
  // The pool that prefills: aggregated, the one pool.
  const Pool& prefill() const { return pools_.front(); }
  // The pool that decodes: aggregated, the one pool.
  const Pool& decode() const { return pools_.back(); }
  KvTransferMode transfer() const { return transfer_; }
  bool same_cluster() const { return same_cluster_; }
  int64_t gpus() const;
  double UsdPerHour() const;
  double BoardPowerW() const;  // every GPU at its rated board power; 0 when a GPU lacks one
  // "dp4tp8" (an aggregated pool's replicas are its layout's), or "2P x tp4 + 1D x dp8ep8".
  std::string ToString() const;

 private:
  std::vector<Pool> pools_;
  KvTransferMode transfer_ = KvTransferMode::kAfterPrefill;
  bool same_cluster_ = true;
};

}  // namespace shardwise
