// Two-batch overlap (DeepSeek-V3 Technical Report, 3.4 and its day-6 inference system notes;
// SGLang --enable-two-batch-overlap): a stage runs its batch as two micro-batches so that one's
// expert-parallel dispatch and combine travel while the other computes. Each micro-batch pays
// its own weight reads and kernels, and the communication kernels occupy SMs that the compute
// loses while they run. Pure functions.
#pragma once

#include <cstdint>

#include "shardwise/perf/breakdown.h"

namespace shardwise {

// One micro-batch's pass over a stage: its breakdown (ep_comm_s is its exchange over every MoE
// layer) and the non-exchange time it spends in the stage's `moe_layers` MoE layers
// (attention, router, experts, their TP all-reduces).
struct MicroBatchPass {
  PhaseBreakdown breakdown;
  double moe_work_s = 0;
  double moe_layers = 0;
  int64_t exchange_sms = 0;  // SMs the exchange kernels hold while they run
};

// The stage's time when two such micro-batches overlap: outside the MoE layers they run one
// after the other; inside, each layer takes the longer of the two micro-batches' work (slowed
// by `sm_share_lost`, the fraction of SMs the exchange kernels hold) and their two exchanges,
// plus the first work and last exchange that nothing hides: L x max(2 W, 2 X) + min(W, X) for
// per-layer work W and exchange X. ep_comm_s of the result is the exchange left exposed; the
// compute the SMs' loss costs is added to compute_s.
PhaseBreakdown TwoBatchOverlap(const MicroBatchPass& pass, double sm_share_lost);

}  // namespace shardwise
