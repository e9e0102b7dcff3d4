#include "shardwise/layout/expert_placement.h"

#include <fmt/format.h>

#include <algorithm>

namespace shardwise {
namespace {

// EPLB's balanced packing ("DeepSeek-V3 Technical Report" §3.4; deepseek-ai/EPLB): the copies,
// heaviest per copy first (ties: the lower expert), each onto the least-loaded rank (ties: the
// lower rank) that has a free slot and does not hold the expert yet. False when the greedy
// order strands a copy (every rank with room already holds its expert).
bool PackByLoad(const std::vector<int64_t>& copies, const std::vector<double>& load, int64_t ep,
                int64_t slots_per_rank, std::vector<int64_t>& slot_expert) {
  struct Copy {
    double weight = 0;
    int64_t expert = 0;
  };
  std::vector<Copy> list;
  for (int64_t e = 0; e < static_cast<int64_t>(copies.size()); ++e) {
    for (int64_t c = 0; c < copies[e]; ++c) list.push_back({load[e] / copies[e], e});
  }
  std::stable_sort(list.begin(), list.end(),
                   [](const Copy& a, const Copy& b) { return a.weight > b.weight; });
  std::vector<double> rank_load(static_cast<size_t>(ep), 0.0);
  std::vector<int64_t> used(static_cast<size_t>(ep), 0);
  for (const Copy& c : list) {
    int64_t best = -1;
    for (int64_t r = 0; r < ep; ++r) {
      if (used[r] == slots_per_rank) continue;
      const int64_t* first = &slot_expert[r * slots_per_rank];
      if (std::find(first, first + used[r], c.expert) != first + used[r]) continue;
      if (best < 0 || rank_load[r] < rank_load[best]) best = r;
    }
    if (best < 0) return false;
    slot_expert[best * slots_per_rank + used[best]++] = c.expert;
    rank_load[best] += c.weight;
  }
  return true;
}

}  // namespace

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
  p.slot_expert.assign(static_cast<size_t>(experts + redundant), 0);
  if (load.empty() || !PackByLoad(copies, load, ep, p.slots_per_rank, p.slot_expert)) {
    std::vector<int64_t> listed;  // every copy, by expert
    for (int64_t e = 0; e < experts; ++e) listed.insert(listed.end(), copies[e], e);
    for (int64_t i = 0; i < static_cast<int64_t>(listed.size()); ++i) {
      // Without replicas, ranks take consecutive experts; with them, copies are dealt round the
      // ranks (copy i to rank i mod ep), so an expert's <= ep consecutive copies never share one.
      const int64_t slot = redundant == 0 ? i : (i % ep) * p.slots_per_rank + i / ep;
      p.slot_expert[slot] = listed[i];
    }
  }
  p.replicas.assign(static_cast<size_t>(experts), {});
  for (int64_t s = 0; s < static_cast<int64_t>(p.slot_expert.size()); ++s) {
    p.replicas[p.slot_expert[s]].push_back(s);
  }
  return p;
}

std::vector<double> RankLoads(const ExpertPlacement& p, const std::vector<double>& load) {
  std::vector<double> out(p.slot_expert.size() / static_cast<size_t>(p.slots_per_rank), 0.0);
  for (int64_t s = 0; s < static_cast<int64_t>(p.slot_expert.size()); ++s) {
    const int64_t e = p.slot_expert[s];
    out[p.Rank(s)] += (load.empty() ? 1.0 : load[e]) / static_cast<double>(p.replicas[e].size());
  }
  return out;
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
