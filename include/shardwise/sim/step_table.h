// StepTable: one scheduler's iteration times (a replica's, or a pipeline's virtual engine's:
// StepModel::VirtualDecodeS and VirtualPrefillS), tabulated once from the step-time model and
// interpolated, so the simulator never re-runs the model per step. Decode time is tabulated
// over batch x KV context (powers of two), prefill time over the tokens of an iteration x the
// keys each of their queries attends to (its prefix in the cache and its chunk). A mixed iteration
// reads the weights once: decode + prefill - one weight read (the smallest of the three); an
// iteration carrying prompt tokens takes at least the host's time outside CUDA graphs.
#pragma once

#include <vector>

#include "shardwise/common/status.h"
#include "shardwise/perf/step.h"

namespace shardwise {

class StepTable {
 public:
  static StatusOr<StepTable> Build(const StepModel& model, int64_t max_batch, int64_t max_context,
                                   int64_t max_chunk);
  // Iteration time with `decode` sequences at mean KV length `context` and `prefill` prompt
  // tokens (on the busiest attention-DP rank) attending to `keys_per_token` keys on average.
  double StepSeconds(double decode, double context, double prefill, double keys_per_token) const;
  double DecodeSeconds(double batch, double context) const;
  // The GPU's time of a prefill-only iteration (StepSeconds adds the host's floor).
  double PrefillSeconds(double tokens, double keys_per_token) const;

 private:
  std::vector<double> batches_, contexts_, chunks_, keys_;
  std::vector<double> decode_s_;   // [batch][context]
  std::vector<double> prefill_s_;  // [chunk][keys per token]
  double weight_read_s_ = 0;
  double prompt_floor_s_ = 0;  // StepModel::PromptIterationFloorS
  // Tokens per attention rank up to which a prompt-carrying iteration replays a CUDA graph.
  double prompt_graph_tokens_ = 0;
  double attention_dp_ = 1;
};

}  // namespace shardwise
