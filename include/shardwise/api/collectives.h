// Collectives: predicted collective times on a cluster, per message size as nccl-tests prints
// them (collective/cost_model.h); one MoE dispatch or combine priced as DeepEP's benchmark reports
// it (collective/ep_dispatch.h); and the fit of a cluster level's calibration to a real
// nccl-tests log (collective/nccl_tests.h). Pure; thread-safe.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "shardwise/api/catalog.h"
#include "shardwise/collective/cost_model.h"
#include "shardwise/collective/ep_dispatch.h"
#include "shardwise/collective/group.h"
#include "shardwise/collective/nccl_tests.h"
#include "shardwise/common/status.h"

namespace shardwise::api {

// nccl-tests' default element type: sizes are whole floats.
inline constexpr double kNcclTestsElementBytes = 4.0;

struct SweepRequest {
  std::string op = "all-reduce";
  std::string algorithm = "auto";
  int64_t topk = 8;  // all-to-all-topk: ranks each token goes to
  double min_bytes = 8;
  double max_bytes = 8e9;
  double factor = 2;  // each size is the last times this
};

struct SweepRow {
  CollectiveRequest request;
  CollectiveCost cost;
  std::string bound_by;  // the binding level's name, "-" for none
};

struct SweepReport {
  ClusterSpec cluster;
  GroupShape group;  // all of the cluster's GPUs
  CollectiveRequest base;
  std::vector<SweepRow> rows;

  std::string GroupDescription() const;  // "8 gpu x 2 node"
};

StatusOr<SweepReport> Sweep(const ClusterSpec& cluster, const SweepRequest& request);

struct EpRequest {
  std::string op = "ep-dispatch";  // or ep-combine
  std::string algorithm = "auto";
  int64_t topk = 8;
  double tokens = 4096;  // per GPU
  int64_t hidden = 7168;
  int64_t experts = 256;
  int64_t groups = 1;
  int64_t topk_groups = 1;
  std::string dtype;  // empty: fp8 for dispatch, bf16 for combine (as DeepEP)
};

struct EpReport {
  ClusterSpec cluster;
  GroupShape group;
  EpRequest request;  // dtype filled in
  EpDispatchCost chosen;
  std::vector<EpDispatchCost> candidates;  // flat, node-dedup, low-latency
  EpDestinations destinations;
  bool asked = false;  // the algorithm was named, not picked as the fastest
};

bool IsEpOp(const std::string& op);
StatusOr<EpReport> EpExchange(const ClusterSpec& cluster, const EpRequest& request);

struct ImportRequest {
  std::string log_path;  // an nccl-tests log
  std::string op;        // empty: inferred from the log
};

struct ImportReport {
  ClusterSpec cluster;
  NcclTestsLog log;
  CollectiveOp op = CollectiveOp::kAllReduce;
  NcclTestsFit fit;
  double max_abs_error_from_1mb = 0;
  // Set when the largest message is bound by another level than the fitted one.
  std::optional<std::string> binding_level;
};

StatusOr<ImportReport> Import(const ClusterSpec& cluster, const ImportRequest& request);

nlohmann::json ToJson(const SweepReport& report);
nlohmann::json ToJson(const EpReport& report);
// `profile_file`: where the profile was written, empty if not.
nlohmann::json ToJson(const ImportReport& report, const std::string& profile_file);

}  // namespace shardwise::api
