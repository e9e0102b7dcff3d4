// Where each expert lives on the EP ranks of a stage, with redundant replicas (as DeepSeek-V3
// deploys its MoE layers: "DeepSeek-V3 Technical Report" §3.4, redundant experts for load
// balance), and which replica a token is sent to. Without replicas expert e sits on EP rank
// e / (experts / ep). With R replicas, each EP rank holds (experts + R) / ep slots: the R extra
// copies go one by one to the expert with the highest load per copy (ties: the lower id) that
// has fewer than ep copies. Without a load (uniform) the copies, listed by expert, are dealt
// round the ranks; with a load they are packed as DeepSeek's EPLB packs them (the heaviest copy
// first, each onto the least-loaded rank with a free slot), and in both no rank holds an expert
// twice. Shared by the runtime (which replica a token goes to) and the step-time model (the
// busiest rank's load). Pure functions and a value type; thread-compatible.
#pragma once

#include <cstdint>
#include <vector>

#include "shardwise/common/status.h"

namespace shardwise {

struct ExpertPlacement {
  int64_t slots_per_rank = 0;
  std::vector<int64_t> slot_expert;            // [ep x slots_per_rank]: the expert in each slot
  std::vector<std::vector<int64_t>> replicas;  // per expert: its slots, ascending

  int64_t Rank(int64_t slot) const { return slot / slots_per_rank; }
};

// `load`: the relative traffic of each expert (empty: uniform). Errors name the constraint
// (R below 0, experts + R not a multiple of ep, more copies of one expert than EP ranks).
StatusOr<ExpertPlacement> PlaceExperts(int64_t experts, int64_t ep, int64_t redundant,
                                       const std::vector<double>& load = {});

// Load on each EP rank when every expert's `load` is split evenly over its replicas (as
// ChooseReplica spreads tokens); `load` as for PlaceExperts, empty meaning uniform.
std::vector<double> RankLoads(const ExpertPlacement& placement, const std::vector<double>& load);

// Picks the replica of `expert` for the next token: the one given the fewest tokens so far in
// `sent` (per slot, updated), ties broken starting from replica `start % copies` so that
// different senders spread their ties over different replicas.
int64_t ChooseReplica(const ExpertPlacement& placement, int64_t expert, int64_t start,
                      std::vector<int64_t>& sent);

}  // namespace shardwise
