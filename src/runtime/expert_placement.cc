#include "shardwise/runtime/expert_placement.h"

#include <fmt/format.h>

namespace shardwise {

StatusOr<ExpertPlacement> PlaceExperts(int64_t experts, int64_t ep, int64_t redundant,
                                       const std::vector<double>& load) {
  if (redundant < 0) {
    return Error(fmt::format("--redundant-experts ({}) must be 0 or more", redundant));
  }
  if ((experts + redundant) % ep != 0) {
    return Error(
        fmt::format("--redundant-experts ({}): experts + redundant ({}) must divide by "
                    "ep ({}) so every EP rank holds the same number of expert slots",
                    redundant, experts + redundant, ep));
  }
  if (!load.empty() && static_cast<int64_t>(load.size()) != experts) {
    return Error(
        fmt::format("the expert load has {} entries for {} experts", load.size(), experts));
  }
  ExpertPlacement p;
  p.slots_per_rank = (experts + redundant) / ep;
  std::vector<int64_t> copies(static_cast<size_t>(experts), 1);
  if (redundant > experts * (ep - 1)) {
    return Error(
        fmt::format("--redundant-experts ({}) would put more than one copy of an expert "
                    "on an EP rank; use at most {} with ep {}",
                    redundant, experts * (ep - 1), ep));
  }
  for (int64_t r = 0; r < redundant; ++r) {
    int64_t best = -1;
    double best_load = -1;
    for (int64_t e = 0; e < experts; ++e) {
      const double per_copy = (load.empty() ? 1.0 : load[e]) / static_cast<double>(copies[e]);
      if (copies[e] < ep && per_copy > best_load) {
        best = e;
        best_load = per_copy;
      }
    }
    ++copies[best];
  }
  std::vector<int64_t> listed;  // every copy, by expert
  for (int64_t e = 0; e < experts; ++e) listed.insert(listed.end(), copies[e], e);
  p.slot_expert.assign(listed.size(), 0);
  p.replicas.assign(static_cast<size_t>(experts), {});
  for (int64_t i = 0; i < static_cast<int64_t>(listed.size()); ++i) {
    // Without replicas, ranks take consecutive experts; with them, copies are dealt round the
    // ranks (copy i to rank i mod ep), so an expert's <= ep consecutive copies never share one.
    const int64_t slot = redundant == 0 ? i : (i % ep) * p.slots_per_rank + i / ep;
    p.slot_expert[slot] = listed[i];
  }
  for (int64_t s = 0; s < static_cast<int64_t>(p.slot_expert.size()); ++s) {
    p.replicas[p.slot_expert[s]].push_back(s);
  }
  return p;
}

int64_t ChooseReplica(const ExpertPlacement& p, int64_t expert, int64_t start,
                      std::vector<int64_t>& sent) {
  const std::vector<int64_t>& slots = p.replicas[expert];
  const int64_t n = static_cast<int64_t>(slots.size());
  int64_t best = slots[start % n];
  for (int64_t i = 1; i < n; ++i) {
    const int64_t s = slots[(start + i) % n];
    if (sent[s] < sent[best]) best = s;
  }
  ++sent[best];
  return best;
}

}  // namespace shardwise
