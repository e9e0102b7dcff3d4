// StepTable: a replica's iteration times, tabulated once from the step-time model and
// interpolated, so the simulator never re-runs the model per step. Decode time is tabulated
// over batch x KV context (powers of two), prefill time over chunk size. A mixed iteration
// reads the weights once: decode + prefill - one weight read (the smallest of the three).
#pragma once

#include <vector>

#include "shardwise/common/status.h"
#include "shardwise/perf/step.h"

namespace shardwise {

class StepTable {
 public:
  static StatusOr<StepTable> Build(const StepModel& model, int64_t max_batch,
                                   int64_t max_context, int64_t max_chunk);
  // Iteration time with `decode` sequences at mean KV length `context` and `prefill` tokens.
  double StepSeconds(double decode, double context, double prefill) const;
  double DecodeSeconds(double batch, double context) const;
  double PrefillSeconds(double tokens) const;

 private:
  std::vector<double> batches_, contexts_, chunks_;
  std::vector<double> decode_s_;   // [batch][context]
  std::vector<double> prefill_s_;  // [chunk]
  double weight_read_s_ = 0;
};

}  // namespace shardwise
