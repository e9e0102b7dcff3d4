#include "shardwise/collective/cost_model.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace shardwise {
namespace {

using Alg = CollectiveAlgorithm;

// Achieved fraction of peak bandwidth for a message of `bytes`: 1 / (1 + (ramp / bytes)^p).
double Ramp(const TopologyLevel& level, double bytes) {
  if (level.ramp_bytes <= 0 || bytes <= 0) return 1.0;
  return 1.0 / (1.0 + std::pow(level.ramp_bytes / bytes, level.ramp_exponent));
}

// Bandwidth one GPU of the group achieves across level d for a message of `bytes`.
double LevelBandwidth(const ClusterSpec& c, const GroupShape& g, int d, double bytes) {
  const TopologyLevel& level = c.levels[d];
  double egress = c.PerGpuEgressBytesPerS(d);
  if (level.mesh && level.fan_out > 1) {
    // Direct links: only the links to the peers in the group carry traffic.
    const double per_link = egress / static_cast<double>(level.fan_out - 1);
    egress = std::min(egress, per_link * static_cast<double>(g.ChildrenTouched(d) - 1));
  }
  return egress * level.efficiency * Ramp(level, bytes);
}

double MaxHopLatency(const ClusterSpec& c, const GroupShape& g) {
  double hop = 0;
  for (int d = 0; d < g.NumLevels(); ++d) {
    if (g.Spans(d)) hop = std::max(hop, c.levels[d].hop_latency_s);
  }
  return hop;
}

struct Terms {
  double bandwidth_s = 0;
  int binding_level = -1;
  void Add(int d, double seconds) {
    if (seconds > bandwidth_s) {
      bandwidth_s = seconds;
      binding_level = d;
    }
  }
};

// Reduce-scatter or all-gather of `bytes` (one pass), hierarchically and pipelined across levels
// (How to Think About GPUs, cross-node collectives): at level d the n_d children of a unit exchange the
// (1 - 1/n_d) share each lacks of the data left after the levels below, B / members_per_child,
// through the members' egress. The slowest level bounds the pipeline.
Terms RingPass(const ClusterSpec& c, const GroupShape& g, double bytes) {
  Terms t;
  for (int d = 0; d < g.NumLevels(); ++d) {
    if (!g.Spans(d)) continue;
    const double children = static_cast<double>(g.ChildrenTouched(d));
    const double inside = static_cast<double>(g.MembersPerChild(d));
    t.Add(d, (1.0 - 1.0 / children) * bytes / (inside * LevelBandwidth(c, g, d, bytes)));
  }
  return t;
}

// Double binary tree all-reduce: every child unit sends and receives about 2x the buffer
// (reduce up, broadcast down), spread over its members' egress.
Terms TreeAllReduce(const ClusterSpec& c, const GroupShape& g, double bytes) {
  Terms t;
  for (int d = 0; d < g.NumLevels(); ++d) {
    if (!g.Spans(d)) continue;
    const double inside = static_cast<double>(g.MembersPerChild(d));
    t.Add(d, 2.0 * bytes / (inside * LevelBandwidth(c, g, d, bytes)));
  }
  return t;
}

double TreeLatency(const ClusterSpec& c, const GroupShape& g) {
  double steps_latency = 0;
  for (int d = 0; d < g.NumLevels(); ++d) {
    if (!g.Spans(d)) continue;
    const double depth = std::ceil(std::log2(static_cast<double>(g.ChildrenTouched(d))));
    steps_latency += depth * c.levels[d].hop_latency_s;
  }
  return 2.0 * steps_latency;
}

// Direct all-to-all of `bytes` per rank: bytes for peers in the same node go over the scale-up
// link; bytes leaving a level-d child unit go through the member's own egress at level d.
Terms DirectAllToAll(const ClusterSpec& c, const GroupShape& g, double bytes) {
  Terms t;
  const double n = static_cast<double>(g.size);
  for (int d = 0; d < g.NumLevels(); ++d) {
    if (!g.Spans(d)) continue;
    const double share = d == 0 ? (static_cast<double>(g.members_per_unit[0]) - 1.0) / n
                                : (n - static_cast<double>(g.MembersPerChild(d))) / n;
    t.Add(d, share * bytes / LevelBandwidth(c, g, d, bytes));
  }
  return t;
}

// Pipelined chain broadcast: every child unit receives the whole buffer once.
Terms ChainBroadcast(const ClusterSpec& c, const GroupShape& g, double bytes) {
  Terms t;
  for (int d = 0; d < g.NumLevels(); ++d) {
    if (!g.Spans(d)) continue;
    const double inside = static_cast<double>(g.MembersPerChild(d));
    t.Add(d, bytes / (inside * LevelBandwidth(c, g, d, bytes)));
  }
  return t;
}

bool NvlsApplies(const ClusterSpec& c, const GroupShape& g) {
  return g.HighestLevel() == 0 && c.levels[0].in_network_reduction;
}

CollectiveCost Finish(const GroupShape& g, const CollectiveRequest& r, Alg algorithm,
                      double latency_s, const Terms& terms) {
  CollectiveCost cost;
  cost.algorithm = algorithm;
  cost.latency_s = latency_s;
  cost.bandwidth_s = terms.bandwidth_s;
  cost.binding_level = terms.binding_level;
  cost.time_s = latency_s + terms.bandwidth_s;
  cost.algbw_bytes_per_s = cost.time_s > 0 ? r.bytes / cost.time_s : 0;
  cost.busbw_bytes_per_s = cost.algbw_bytes_per_s * BusBandwidthFactor(r.op, g.size);
  return cost;
}

CollectiveCost PredictWith(const ClusterSpec& c, const GroupShape& g, const CollectiveRequest& r,
                           Alg algorithm) {
  const double n = static_cast<double>(g.size);
  const double launch = c.launch_latency_s;
  const double hop = MaxHopLatency(c, g);
  switch (r.op) {
    case CollectiveOp::kAllReduce: {
      if (algorithm == Alg::kNvls) {
        // In-switch reduction: each GPU sends its buffer once and receives the result once.
        const TopologyLevel& l = c.levels[0];
        Terms t;
        t.Add(0, r.bytes / (c.PerGpuEgressBytesPerS(0) * l.in_network_fraction * Ramp(l, r.bytes)));
        return Finish(g, r, algorithm, launch + 2.0 * l.hop_latency_s, t);
      }
      if (algorithm == Alg::kTree) {
        return Finish(g, r, algorithm, launch + TreeLatency(c, g), TreeAllReduce(c, g, r.bytes));
      }
      // Ring all-reduce = reduce-scatter + all-gather (7 Scaling Across Hardware: 2 (T-1)/T x bytes).
      Terms t = RingPass(c, g, r.bytes);
      t.bandwidth_s *= 2.0;
      return Finish(g, r, Alg::kRing, launch + 2.0 * (n - 1.0) * hop, t);
    }
    case CollectiveOp::kAllGather:
    case CollectiveOp::kReduceScatter:
      return Finish(g, r, Alg::kRing, launch + (n - 1.0) * hop, RingPass(c, g, r.bytes));
    case CollectiveOp::kAllToAll:
      return Finish(g, r, Alg::kDirect, launch + hop, DirectAllToAll(c, g, r.bytes));
    case CollectiveOp::kAllToAllTopK: {
      // Each token is sent once to each distinct destination rank it routes to.
      const double copies = ExpectedDistinctDestinations(g.size, r.topk);
      return Finish(g, r, Alg::kDirect, launch + hop, DirectAllToAll(c, g, r.bytes * copies));
    }
    case CollectiveOp::kBroadcast:
      return Finish(g, r, Alg::kRing, launch + (n - 1.0) * hop, ChainBroadcast(c, g, r.bytes));
    case CollectiveOp::kSendRecv: {
      Terms t;
      const int d = g.HighestLevel();
      if (d >= 0) t.Add(d, r.bytes / LevelBandwidth(c, g, d, r.bytes));
      return Finish(g, r, Alg::kDirect, launch + hop, t);
    }
  }
  return CollectiveCost{};
}

std::vector<Alg> Candidates(const ClusterSpec& c, const GroupShape& g, CollectiveOp op) {
  switch (op) {
    case CollectiveOp::kAllReduce: {
      std::vector<Alg> algs = {Alg::kRing, Alg::kTree};
      if (NvlsApplies(c, g)) algs.push_back(Alg::kNvls);
      return algs;
    }
    case CollectiveOp::kAllGather:
    case CollectiveOp::kReduceScatter:
    case CollectiveOp::kBroadcast:
      return {Alg::kRing};
    default:
      return {Alg::kDirect};
  }
}

}  // namespace

double ExpectedDistinctDestinations(int64_t n, int64_t k) {
  const double nn = static_cast<double>(n);
  return nn * (1.0 - std::pow(1.0 - 1.0 / nn, static_cast<double>(k)));
}

Status CheckAlgorithm(const ClusterSpec& c, const GroupShape& g, CollectiveOp op, Alg algorithm) {
  if (algorithm == Alg::kAuto) return Status();
  const std::vector<Alg> ok = Candidates(c, g, op);
  if (std::find(ok.begin(), ok.end(), algorithm) != ok.end()) return Status();
  if (algorithm == Alg::kNvls && op == CollectiveOp::kAllReduce) {
    return Error(fmt::format("nvls needs in-switch reduction inside one '{}' unit of cluster "
                             "'{}'; use --algo ring or tree",
                             c.levels[0].name, c.name));
  }
  std::string names;
  for (Alg a : ok) names += (names.empty() ? "" : ", ") + std::string(AlgorithmName(a));
  return Error(fmt::format("{} does not run as {}; use {} (or auto)", OpName(op),
                           AlgorithmName(algorithm), names));
}

CollectiveCost PredictCollective(const ClusterSpec& c, const GroupShape& g,
                                 const CollectiveRequest& r) {
  if (g.size <= 1 || r.bytes <= 0) {
    CollectiveCost none;
    none.algorithm = r.algorithm == Alg::kAuto ? Alg::kDirect : r.algorithm;
    return none;
  }
  if (r.algorithm != Alg::kAuto) {
    SW_CHECK(CheckAlgorithm(c, g, r.op, r.algorithm).ok(), "PredictCollective: bad algorithm");
    return PredictWith(c, g, r, r.algorithm);
  }
  CollectiveCost best;
  best.time_s = -1;
  for (Alg a : Candidates(c, g, r.op)) {
    const CollectiveCost cost = PredictWith(c, g, r, a);
    if (best.time_s < 0 || cost.time_s < best.time_s) best = cost;
  }
  return best;
}

}  // namespace shardwise
