// nccl-tests output: parsing a real log, and fitting a cluster level's calibration (efficiency,
// hop latency, message-size ramp) so the cost model reproduces it. Pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "shardwise/collective/collective.h"
#include "shardwise/common/status.h"
#include "shardwise/hw/cluster.h"

namespace shardwise {

struct NcclTestsRow {
  double bytes = 0;
  double time_s = 0;             // in-place time (out-of-place when in-place is absent)
  double algbw_bytes_per_s = 0;  // as printed
  double busbw_bytes_per_s = 0;  // as printed
};

struct NcclTestsLog {
  std::vector<NcclTestsRow> rows;  // ascending size
  int64_t ranks = 0;               // from the "#  Rank" lines
  int64_t hosts = 0;               // distinct host names
  // Inferred from busbw / algbw (2(n-1)/n: all-reduce; (n-1)/n: all-gather family; 1:
  // broadcast), when the ratio is unambiguous.
  std::optional<CollectiveOp> inferred_op;
};

StatusOr<NcclTestsLog> ParseNcclTests(const std::string& text, const std::string& source);

struct FitPoint {
  double bytes = 0;
  double measured_s = 0;
  double predicted_s = 0;
};

struct NcclTestsFit {
  LevelProfile profile;
  std::vector<FitPoint> points;  // every row, with the fitted model's prediction
};

// Fits the calibration of the outermost level the log's ranks span on `cluster`.
StatusOr<NcclTestsFit> FitNcclTests(const ClusterSpec& cluster, const NcclTestsLog& log,
                                    CollectiveOp op, const std::string& source);

}  // namespace shardwise
