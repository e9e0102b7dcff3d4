#include "shardwise/collective/nccl_tests.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>

#include "shardwise/collective/cost_model.h"
#include "shardwise/collective/group.h"
#include "shardwise/common/input_policy.h"

namespace shardwise {
namespace {

std::optional<double> ToNumber(const std::string& s) {
  try {
    size_t used = 0;
    const double v = std::stod(s, &used);
    if (used != s.size() || !std::isfinite(v)) return std::nullopt;
    return v;
  } catch (...) {
    return std::nullopt;
  }
}

std::optional<CollectiveOp> InferOp(const std::vector<NcclTestsRow>& rows, int64_t ranks) {
  if (ranks < 2) return std::nullopt;
  // Use the largest message: its printed bandwidths have the most digits.
  const NcclTestsRow& r = rows.back();
  if (r.algbw_bytes_per_s <= 0) return std::nullopt;
  const double ratio = r.busbw_bytes_per_s / r.algbw_bytes_per_s;
  const double n = static_cast<double>(ranks);
  if (std::fabs(ratio - 2 * (n - 1) / n) < 0.02) return CollectiveOp::kAllReduce;
  if (std::fabs(ratio - (n - 1) / n) < 0.02) return CollectiveOp::kAllGather;
  if (std::fabs(ratio - 1.0) < 0.02) return CollectiveOp::kBroadcast;
  return std::nullopt;
}

}  // namespace

StatusOr<NcclTestsLog> ParseNcclTests(const std::string& text, const std::string& source) {
  constexpr size_t kMaxRows = 256;
  NcclTestsLog log;
  std::set<std::string> hosts;
  std::istringstream in(text);
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    std::istringstream words(line);
    std::vector<std::string> w;
    for (std::string s; words >> s;) w.push_back(s);
    if (w.empty()) continue;
    if (w[0] == "#") {
      // "#  Rank  0 Group  0 Pid   6899 on host-a device  0 ..."
      if (w.size() > 8 && w[1] == "Rank" && w[7] == "on") {
        ++log.ranks;
        hosts.insert(w[8]);
      }
      continue;
    }
    if (w[0][0] == '#') continue;
    // size count type redop root time algbw busbw #wrong [time algbw busbw #wrong]
    if (w.size() < 8) continue;
    const auto bytes = ToNumber(w[0]);
    if (!bytes) continue;
    if (*bytes <= 0) {
      return Error(fmt::format("{}:{}: message size must be positive, got {}", source, line_no,
                               Printable(w[0])));
    }
    if (log.rows.size() >= kMaxRows) {
      return Error(
          fmt::format("{}: more than {} data rows (a factor-2 sweep from 8 B to 8 GB has "
                      "31); keep one sweep per file",
                      source, kMaxRows));
    }
    NcclTestsRow row;
    row.bytes = *bytes;
    const bool in_place = w.size() >= 13;
    const size_t t = in_place ? 9 : 5;
    const auto time_us = ToNumber(w[t]);
    const auto algbw = ToNumber(w[t + 1]);
    const auto busbw = ToNumber(w[t + 2]);
    if (!time_us || !algbw || !busbw || *time_us <= 0 || *algbw < 0 || *busbw < 0) {
      return Error(fmt::format("{}:{}: cannot read time/algbw/busbw from a data row", source,
                               line_no));
    }
    row.time_s = *time_us * 1e-6;
    row.algbw_bytes_per_s = *algbw * 1e9;
    row.busbw_bytes_per_s = *busbw * 1e9;
    if (!log.rows.empty() && row.bytes <= log.rows.back().bytes) {
      return Error(fmt::format("{}:{}: message sizes must increase down the file", source, line_no));
    }
    log.rows.push_back(row);
  }
  if (log.rows.size() < 3) {
    return Error(fmt::format("{}: found {} nccl-tests data rows; need at least 3 (is this an "
                             "nccl-tests output file?)",
                             source, log.rows.size()));
  }
  log.hosts = static_cast<int64_t>(hosts.size());
  log.inferred_op = InferOp(log.rows, log.ranks);
  return log;
}

namespace {

// Predicted time of `bytes` with the level's calibration replaced by `p`.
// `work` is a scratch copy of the cluster whose level is overwritten (avoids a copy per call).
double PredictWithProfile(ClusterSpec& work, const GroupShape& g, CollectiveOp op, double bytes,
                          int level, const LevelProfile& p) {
  TopologyLevel& l = work.levels[level];
  l.efficiency = p.efficiency;
  l.hop_latency_s = p.hop_latency_s;
  l.ramp_bytes = p.ramp_bytes;
  l.ramp_exponent = p.ramp_exponent;
  CollectiveRequest r;
  r.op = op;
  r.bytes = bytes;
  return PredictCollective(work, g, r).time_s;
}

// Finds x in [lo, hi] with f(x) = target for f monotone (increasing or decreasing).
template <typename F>
double Bisect(F f, double lo, double hi, double target) {
  const bool increasing = f(hi) > f(lo);
  for (int i = 0; i < 60; ++i) {
    const double mid = 0.5 * (lo + hi);
    ((f(mid) < target) == increasing ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

// Minimises f over R^n from x0 by the Nelder-Mead simplex method (standard coefficients).
template <typename F>
std::vector<double> NelderMead(F f, std::vector<double> x0, double step, int iterations) {
  const size_t n = x0.size();
  std::vector<std::vector<double>> pts(n + 1, x0);
  for (size_t i = 0; i < n; ++i) pts[i + 1][i] += step;
  std::vector<double> val(n + 1);
  for (size_t i = 0; i <= n; ++i) val[i] = f(pts[i]);
  auto along = [&](const std::vector<double>& centre, const std::vector<double>& p, double t) {
    std::vector<double> out(n);
    for (size_t k = 0; k < n; ++k) out[k] = centre[k] + t * (p[k] - centre[k]);
    return out;
  };
  for (int it = 0; it < iterations; ++it) {
    std::vector<size_t> order(n + 1);
    for (size_t i = 0; i <= n; ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return val[a] < val[b]; });
    const size_t worst = order[n];
    std::vector<double> centre(n, 0.0);
    for (size_t i = 0; i < n; ++i) {
      for (size_t k = 0; k < n; ++k) centre[k] += pts[order[i]][k] / static_cast<double>(n);
    }
    const std::vector<double> reflected = along(centre, pts[worst], -1.0);
    const double fr = f(reflected);
    if (fr < val[order[0]]) {
      const std::vector<double> expanded = along(centre, pts[worst], -2.0);
      const double fe = f(expanded);
      pts[worst] = fe < fr ? expanded : reflected;
      val[worst] = std::min(fe, fr);
    } else if (fr < val[order[n - 1]]) {
      pts[worst] = reflected;
      val[worst] = fr;
    } else {
      const std::vector<double> contracted = along(centre, pts[worst], 0.5);
      const double fc = f(contracted);
      if (fc < val[worst]) {
        pts[worst] = contracted;
        val[worst] = fc;
      } else {
        for (size_t i = 1; i <= n; ++i) {
          pts[order[i]] = along(pts[order[0]], pts[order[i]], 0.5);
          val[order[i]] = f(pts[order[i]]);
        }
      }
    }
  }
  return pts[std::min_element(val.begin(), val.end()) - val.begin()];
}

}  // namespace

StatusOr<NcclTestsFit> FitNcclTests(const ClusterSpec& cluster, const NcclTestsLog& log,
                                    CollectiveOp op, const std::string& source) {
  const int64_t ranks = log.ranks > 0 ? log.ranks : cluster.num_gpus;
  if (ranks > cluster.num_gpus) {
    return Error(fmt::format("the log has {} ranks but cluster '{}' has {} GPUs; use --nodes or "
                             "--gpus to match",
                             ranks, cluster.name, cluster.num_gpus));
  }
  if (log.hosts > 1 && ranks / log.hosts != cluster.GpusPerNode()) {
    return Error(fmt::format("the log has {} ranks per host but cluster '{}' has {} GPUs per "
                             "node; pick a cluster shaped like the measured one",
                             ranks / log.hosts, cluster.name, cluster.GpusPerNode()));
  }
  // Bandwidth (efficiency, ramp) is only visible in large messages; a log of small ones would
  // fit any efficiency equally well.
  constexpr double kMinLargestBytes = 1 << 20;
  if (log.rows.back().bytes < kMinLargestBytes) {
    return Error(
        fmt::format("{}: the largest message is {:.0f} bytes; fitting needs messages of "
                    "1 MB or more (run nccl-tests with -e 1G or larger)",
                    source, log.rows.back().bytes));
  }
  SW_ASSIGN_OR_RETURN(GroupShape g, PlaceGroup(cluster, ranks));
  const int level = g.HighestLevel();
  if (level < 0) return Error("the log has a single rank; nothing to fit");

  ClusterSpec work = cluster;
  const NcclTestsRow& small = log.rows.front();
  const NcclTestsRow& large = log.rows.back();
  LevelProfile best;
  double best_error = -1;
  // Grid over the ramp; latency and efficiency solved to match the smallest and largest rows.
  for (double exponent = 0.3; exponent <= 1.5 + 1e-9; exponent += 0.05) {
    for (double log2_ramp = 10; log2_ramp <= 34; log2_ramp += 0.25) {
      LevelProfile p;
      p.ramp_exponent = exponent;
      p.ramp_bytes = std::exp2(log2_ramp);
      p.efficiency = 1.0;
      for (int round = 0; round < 3; ++round) {
        p.hop_latency_s = Bisect(
            [&](double h) {
              LevelProfile q = p;
              q.hop_latency_s = h;
              return PredictWithProfile(work, g, op, small.bytes, level, q);
            },
            0.0, 1e-3, small.time_s);
        p.efficiency = Bisect(
            [&](double e) {
              LevelProfile q = p;
              q.efficiency = e;
              return PredictWithProfile(work, g, op, large.bytes, level, q);
            },
            0.01, 1.0, large.time_s);
      }
      double error = 0;
      for (const NcclTestsRow& row : log.rows) {
        const double pred = PredictWithProfile(work, g, op, row.bytes, level, p);
        error += std::pow(std::log(pred / row.time_s), 2);
      }
      if (best_error < 0 || error < best_error) {
        best_error = error;
        best = p;
      }
    }
  }
  // Refine all four parameters freely (the grid pinned the end points), in transformed
  // coordinates that keep them in range: log latency, logit efficiency, log ramp, log exponent.
  auto decode = [](const std::vector<double>& x) {
    LevelProfile p;
    p.hop_latency_s = std::exp(x[0]);
    p.efficiency = 1.0 / (1.0 + std::exp(-x[1]));
    p.ramp_bytes = std::exp(x[2]);
    p.ramp_exponent = std::clamp(std::exp(x[3]), 0.05, 10.0);
    return p;
  };
  auto total_error = [&](const std::vector<double>& x) {
    const LevelProfile p = decode(x);
    double error = 0;
    for (const NcclTestsRow& row : log.rows) {
      error += std::pow(std::log(PredictWithProfile(work, g, op, row.bytes, level, p) / row.time_s), 2);
    }
    return error;
  };
  const double e = std::clamp(best.efficiency, 1e-3, 1 - 1e-6);
  const std::vector<double> x = NelderMead(
      total_error,
      {std::log(std::max(best.hop_latency_s, 1e-9)), std::log(e / (1 - e)),
       std::log(best.ramp_bytes), std::log(best.ramp_exponent)},
      0.3, 600);
  if (total_error(x) < best_error) best = decode(x);
  best.cluster = cluster.name;
  best.level = cluster.levels[level].name;
  best.source = fmt::format("fitted to {} ({} over {} ranks, {} to {} bytes)", source, OpName(op),
                            ranks, small.bytes, large.bytes);
  NcclTestsFit fit;
  fit.profile = best;
  for (const NcclTestsRow& row : log.rows) {
    fit.points.push_back(
        {row.bytes, row.time_s, PredictWithProfile(work, g, op, row.bytes, level, best)});
  }
  return fit;
}

}  // namespace shardwise
