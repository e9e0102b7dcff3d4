// StageCompute: the kernel interface a rank's forward pass runs on, chosen per rank by the
// compute registry (compute_registry.h): the CPU's fp32 RankModel, or the CUDA backend's bf16
// model on a GPU. Activations cross this interface as host fp32 rows (sequence-major), the same
// rows pipeline stages send each other; the communicators in RankComms are used inside Forward.
// An instance belongs to one rank; not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "shardwise/common/status.h"
#include "shardwise/runtime/rank_model.h"

namespace shardwise {

class StageCompute {
 public:
  virtual ~StageCompute() = default;
  virtual bool first_stage() const = 0;
  virtual bool last_stage() const = 0;
  virtual int64_t hidden() const = 0;
  virtual int64_t vocab() const = 0;
  // x = embeddings of `tokens` (first stage only).
  virtual Status Embed(const std::vector<int64_t>& tokens, std::vector<float>& x) = 0;
  // This stage's layers on the rows of each sequence in `seqs`, at absolute `positions`, after
  // which each sequence holds `context` tokens; `split`: the rows are this CP rank's share of a
  // prefill (RankModel::Forward has the details).
  virtual Status Forward(std::vector<float>& x, const std::vector<int>& seqs,
                         const std::vector<int64_t>& positions, int64_t context, bool split,
                         const RankComms& comms) = 0;
  // Logits [seqs x vocab] of each sequence's last row of x (last stage only), each TP rank's
  // vocabulary rows all-gathered over `tp`.
  virtual Status Logits(const std::vector<float>& x, int64_t seqs, int64_t len,
                        std::vector<float>& out, Communicator& tp) = 0;
  // MoE (token, expert) pairs this rank routed and dropped over capacity so far.
  virtual MoeCounts moe_counts() const = 0;
};

// The CPU implementation: the fp32 RankModel as it is.
std::unique_ptr<StageCompute> CpuStage(RankModel model);

}  // namespace shardwise
