#include "shardwise/train/planner.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>

#include "shardwise/common/format.h"
#include "shardwise/model/accounting.h"
#include "shardwise/perf/roofline.h"

namespace shardwise::train {
namespace {

constexpr int64_t kMaxMicroBatch = 16;
constexpr int64_t kVirtualStages[] = {2, 3, 4, 5, 6, 8};
constexpr int64_t kContextParallel[] = {1, 2, 4, 8, 16};
// CP only when each rank keeps at least this many tokens of a sequence.
constexpr int64_t kMinTokensPerCpRank = 2048;

std::vector<int64_t> Divisors(int64_t n, int64_t limit) {
  std::vector<int64_t> out;
  for (int64_t d = 1; d <= std::min(n, limit); ++d) {
    if (n % d == 0) out.push_back(d);
  }
  return out;
}

struct SearchResult {
  std::vector<TrainEstimate> best_per_layout;
  int64_t layouts = 0, evaluated = 0, fitting = 0;
  std::optional<TrainEstimate> smallest_misfit;  // the config closest to fitting
  // Why layouts and configs were refused (an FP8 recipe the GPU lacks, a pipeline split that
  // cannot hold the layers, a batch that does not divide), by message: how often, and the first
  // status of each; the most common is said when none is valid.
  std::map<std::string, std::pair<int64_t, Status>> refusals;

  void Refused(const Status& why) {
    auto& [count, status] = refusals[why.message()];
    if (count++ == 0) status = why;
  }
  // The reason most layouts and configs were refused (an FP8 recipe the GPU lacks refuses every
  // layout alike; a batch that does not divide, some configs of some layouts).
  Status MostCommonRefusal() const {
    const std::pair<int64_t, Status>* most = nullptr;
    for (const auto& [message, entry] : refusals) {
      if (most == nullptr || entry.first > most->first) most = &entry;
    }
    return most ? most->second : Status();
  }
};

// A layout given to explain must span the cluster (or the `gpus` it was cut to): its time and
// dollars are for the GPUs rented, and idle ones would go uncounted. The layout filled out with
// data parallelism is suggested where the global batch divides over it.
Status UsesEveryGpu(const Layout& l, const ClusterSpec& c, int64_t global_batch) {
  if (l.gpus() == c.num_gpus) return Status();
  std::string fill;
  if (c.num_gpus % l.gpus() == 0) {
    Layout filled = l;
    filled.dp *= c.num_gpus / l.gpus();
    if (global_batch % filled.dp == 0) {
      fill = fmt::format(", or a layout of {} such as {}", Counted(c.num_gpus, "GPU", "GPUs"),
                         filled.ToString());
    }
  }
  return FieldError("layout",
                    fmt::format("`layout` {} uses {} of the {} GPUs of {}: give `gpus` {}{}",
                                l.ToString(), l.gpus(), c.num_gpus, c.name, l.gpus(), fill));
}

std::vector<Layout> CandidateLayouts(const ModelSpec& m, const ClusterSpec& c, const TrainEngine& e,
                                     const TrainRequest& r) {
  if (r.only_layout) return {*r.only_layout};
  std::vector<Layout> out;
  const int64_t n = c.num_gpus;
  const int64_t max_tp = std::min<int64_t>(m.num_heads, 2 * c.GpusPerNode());
  for (int64_t tp = 1; tp <= max_tp; tp *= 2) {
    if (n % tp != 0) continue;
    for (int64_t cp : kContextParallel) {
      if ((cp > 1 && !e.context_parallel) || r.config.seq_len % cp != 0 ||
          (cp > 1 && r.config.seq_len / cp < kMinTokensPerCpRank) || n % (tp * cp) != 0) {
        continue;
      }
      for (int64_t pp : Divisors(n / (tp * cp), m.num_layers())) {
        const int64_t dp = n / (tp * cp * pp);
        if (r.config.global_batch % dp != 0) continue;
        std::vector<int64_t> eps = {1};
        if (m.is_moe() && e.expert_parallel)
          eps = Divisors(std::gcd(m.moe.num_experts, dp * tp * cp), m.moe.num_experts);
        for (int64_t ep : eps) {
          Layout l;
          l.tp = tp;
          l.cp = cp;
          l.pp = pp;
          l.dp = dp;
          l.ep = ep;
          if (ValidateLayout(l, m).ok()) out.push_back(l);
        }
      }
    }
  }
  return out;
}

std::vector<Schedule> CandidateSchedules(const TrainEngine& e, const TrainRequest& r, int64_t pp) {
  if (!r.search_schedule) return {r.config.schedule};
  std::vector<Schedule> out = {Schedule{}};
  if (pp < 2) return out;
  if (e.Offers(ScheduleKind::kInterleaved)) {
    for (int64_t v : kVirtualStages) out.push_back({ScheduleKind::kInterleaved, v});
  }
  if (e.Offers(ScheduleKind::kZeroBubble)) out.push_back({ScheduleKind::kZeroBubble, 1});
  return out;
}

// Fastest first; among equals (within 0.1%) the one with fewer parallel dimensions, then less
// memory.
bool Faster(const TrainEstimate& a, const TrainEstimate& b) {
  if (std::abs(a.step_s - b.step_s) > 1e-3 * std::min(a.step_s, b.step_s)) {
    return a.step_s < b.step_s;
  }
  const size_t da = a.layout.ToString().size(), db = b.layout.ToString().size();
  if (da != db) return da < db;
  return a.memory.UsedBytes() < b.memory.UsedBytes();
}

// Under full recompute, the fewest layers per model chunk (Megatron's block method) that still
// fit: fewer recomputed layers are faster, and what fits with N fits with more.
template <typename Evaluate>
TrainEstimate FewestRecomputed(const TrainEstimate& all, const Evaluate& evaluate) {
  int64_t most = 0;
  for (const PipelineChunk& chunk : all.split.chunks) most = std::max(most, chunk.layers);
  TrainEstimate best = all;
  TrainConfig cfg = all.config;
  int64_t lo = 1, hi = most;
  while (lo < hi) {
    cfg.recompute_layers = (lo + hi) / 2;
    if (std::optional<TrainEstimate> fits = evaluate(cfg)) {
      best = *fits;
      hi = cfg.recompute_layers;
    } else {
      lo = cfg.recompute_layers + 1;
    }
  }
  return best;
}

SearchResult Search(const ModelSpec& m, const ClusterSpec& c, const TrainEngine& e,
                    const TrainRequest& r) {
  SearchResult out;
  std::vector<int> zeros;
  for (int z : e.zero_stages) {
    if (!r.search_zero && z != r.config.zero) continue;
    zeros.push_back(z);
  }
  if (!r.search_zero && zeros.empty()) zeros.push_back(r.config.zero);  // Estimate says why
  // Without data-parallel replicas ZeRO has nothing to shard over: every stage is stage 0, so
  // the search shows 0 (a stage given is kept).
  const std::vector<int> unsharded = r.search_zero ? std::vector<int>{0} : zeros;
  const std::vector<Recompute> modes =
      r.search_recompute
          ? std::vector<Recompute>{Recompute::kNone, Recompute::kSelective, Recompute::kFull}
          : std::vector<Recompute>{r.config.recompute};
  for (const Layout& l : CandidateLayouts(m, c, e, r)) {
    auto model = TrainModel::Create(m, c, l, e);
    if (!model.ok()) {
      out.Refused(model.status());
      continue;
    }
    ++out.layouts;
    const int64_t per_rank = r.config.global_batch / l.dp;
    std::vector<int64_t> micro = {r.config.micro_batch};
    if (r.search_micro_batch) micro = Divisors(per_rank, kMaxMicroBatch);
    std::optional<TrainEstimate> best;
    std::shared_ptr<const LayerCosts> passes;
    // Estimates a config; empty when it is invalid or does not fit (the closest misfit kept).
    auto evaluate = [&](const TrainConfig& cfg) -> std::optional<TrainEstimate> {
      auto est = model->Estimate(cfg, *passes);
      if (!est.ok()) {
        out.Refused(est.status());
        return std::nullopt;
      }
      ++out.evaluated;
      if (!est->memory.Fits()) {
        if (!out.smallest_misfit ||
            est->memory.UsedBytes() < out.smallest_misfit->memory.UsedBytes()) {
          out.smallest_misfit = *est;
        }
        return std::nullopt;
      }
      ++out.fitting;
      return *est;
    };
    for (int64_t b : micro) {
      for (Recompute mode : modes) {
        TrainConfig cfg = r.config;
        cfg.micro_batch = b;
        cfg.recompute = mode;
        passes = model->Passes(cfg);
        for (const Schedule& s : CandidateSchedules(e, r, l.pp)) {
          for (int z : l.dp* l.cp > 1 ? zeros : unsharded) {
            cfg.schedule = s;
            cfg.zero = z;
            std::optional<TrainEstimate> found = evaluate(cfg);
            if (found && r.search_recompute && mode == Recompute::kFull) {
              found = FewestRecomputed(*found, evaluate);
            }
            if (found && (!best || Faster(*found, *best))) best = found;
          }
        }
      }
    }
    if (best) out.best_per_layout.push_back(*best);
  }
  std::sort(out.best_per_layout.begin(), out.best_per_layout.end(), Faster);
  return out;
}

std::string ConfigText(const TrainEstimate& e) {
  return fmt::format("{} b{} x{} {} ZeRO-{} recompute {}", e.layout.ToString(),
                     e.config.micro_batch, e.micro_batches, e.config.schedule.ToString(),
                     e.config.zero, e.config.RecomputeText());
}

// The part of the step where `loser` spends the most time over `winner`.
// Where the runner-up loses most against the winner, and where it gains most, part by part of
// the step (winner's time vs the runner-up's; a part one of them lacks is "none").
std::string WhereItLoses(const TrainEstimate& winner, const TrainEstimate& loser) {
  const auto a = StepParts(winner);
  const auto b = StepParts(loser);
  size_t worst = 0, best = 0;
  for (size_t i = 1; i < a.size(); ++i) {
    if (b[i].second - a[i].second > b[worst].second - a[worst].second) worst = i;
    if (a[i].second - b[i].second > a[best].second - b[best].second) best = i;
  }
  const auto time = [](double s) { return s > 0 ? FormatSeconds(s) : std::string("none"); };
  std::string out = fmt::format("loses on {}: {} against the winner's {}", b[worst].first,
                                time(b[worst].second), time(a[worst].second));
  if (a[best].second > b[best].second) {
    out += fmt::format(", gains on {}: {} against {}", b[best].first, time(b[best].second),
                       time(a[best].second));
  }
  return out;
}

std::string Why(const TrainEstimate& e, const TrainEstimate* next, size_t rank) {
  const std::string bounds =
      fmt::format("bound by {}; largest overhead {}; {} of {} per GPU", e.bound, e.overhead,
                  FormatBytes(e.memory.UsedBytes()), FormatBytes(e.memory.usable_bytes));
  if (rank == 0 && next != nullptr && next->step_s <= e.step_s * (1 + 1e-3)) {
    return fmt::format("{} ties with {} and is the simpler layout; {}", ConfigText(e),
                       next->layout.ToString(), bounds);
  }
  if (rank == 0 && next != nullptr) {
    return fmt::format("{} wins: {:.1f}% faster than {} (which {}); {}", ConfigText(e),
                       100 * (next->step_s / e.step_s - 1), next->layout.ToString(),
                       WhereItLoses(e, *next), bounds);
  }
  return fmt::format("{}: {}", ConfigText(e), bounds);
}

// What could make the closest misfit fit: more GPUs always; a higher ZeRO stage only where there
// are replicas to shard over and a stage left (ZeRO-3 not with PP); full recompute only where it
// is not already on; a shorter sequence or context parallelism where activations and buffers,
// which scale with the sequence, outweigh the model's states.
// `relaxed_fits`: whether the search with the ZeRO stage and recompute freed finds a fit; where it
// does not, raising them is not offered.
std::string Remedies(const TrainEstimate& e, const TrainEngine& engine, bool relaxed_fits) {
  const TrainMemory& mem = e.memory;
  std::vector<std::string> fixes = {"add GPUs (--nodes)"};
  int top_zero =
      e.config.zero;  // the engine's highest stage this layout may use (ZeRO-3 not with PP)
  for (int z : engine.zero_stages) {
    if (z > top_zero && (z < 3 || e.layout.pp == 1)) top_zero = z;
  }
  if (relaxed_fits && e.layout.dp * e.layout.cp > 1 && top_zero > e.config.zero) {
    fixes.push_back(fmt::format("raise --zero (to {})", top_zero));
  }
  if (relaxed_fits && (e.config.recompute != Recompute::kFull || e.config.recompute_layers > 0)) {
    fixes.push_back("use --recompute full");
  }
  const double states =
      mem.states.weight_bytes + mem.states.grad_bytes + mem.states.optimizer_bytes;
  if (mem.activation_bytes + mem.buffer_bytes > states) {
    if (e.config.micro_batch > 1) {
      fixes.push_back(fmt::format("lower --micro-batch (from {})", e.config.micro_batch));
    }
    fixes.push_back(!engine.context_parallel ? std::string("shorten --seq-len")
                    : e.layout.cp > 1
                        ? fmt::format("shorten --seq-len or split the sequence over more "
                                      "context-parallel ranks (cp above {} in --layout)",
                                      e.layout.cp)
                        : "shorten --seq-len or split the sequence with context parallelism (cp "
                          "in --layout)");
  }
  std::string out = fixes.front();
  for (size_t i = 1; i < fixes.size(); ++i) {
    out += (i + 1 == fixes.size() ? " or " : ", ") + fixes[i];
  }
  return out;
}

Status NothingFits(const ModelSpec& m, const ClusterSpec& c, const TrainEngine& engine,
                   const SearchResult& s, bool relaxed_fits) {
  // No config was valid at all: the reason most of them were refused is the cause.
  if (!s.smallest_misfit && s.evaluated == 0 && !s.refusals.empty()) return s.MostCommonRefusal();
  if (!s.smallest_misfit) {
    return Error(
        fmt::format("no layout of {} on {} GPUs is valid for this batch; the global batch "
                    "must divide into micro-batches x DP (try a multiple of {})",
                    m.name, c.num_gpus, c.num_gpus));
  }
  const TrainEstimate& e = *s.smallest_misfit;
  const TrainMemory& mem = e.memory;
  return Error(fmt::format(
      "{} does not fit on {} x {}: the closest ({}) needs {} per GPU of {} usable (weights {}, "
      "grads {}, optimizer {}, activations {}, buffers {}); {}",
      m.name, c.num_gpus, c.gpu.name, ConfigText(e), FormatBytes(mem.UsedBytes()),
      FormatBytes(mem.usable_bytes), FormatBytes(mem.states.weight_bytes),
      FormatBytes(mem.states.grad_bytes), FormatBytes(mem.states.optimizer_bytes),
      FormatBytes(mem.activation_bytes), FormatBytes(mem.buffer_bytes),
      Remedies(e, engine, relaxed_fits)));
}

}  // namespace

CriticalBatch ComputeCriticalBatch(const ModelSpec& m, const ClusterSpec& c,
                                   const TrainEstimate& e) {
  const Roofline r = ComputeRoofline(m, c.gpu, e.config.dtype, Dtype::kBf16, 0, c.GpusPerNode());
  CriticalBatch b;
  b.tokens_per_gpu_intra = r.intra_node.dp_tokens_per_gpu;
  b.tokens_per_gpu_inter = r.inter_node.dp_tokens_per_gpu;
  b.max_tp_intra = r.intra_node.max_tp;
  b.max_tp_inter = r.inter_node.max_tp;
  const bool multi_node = c.num_gpus > c.GpusPerNode();
  b.pure_dp_tokens = static_cast<double>(c.num_gpus) *
                     (multi_node ? b.tokens_per_gpu_inter : b.tokens_per_gpu_intra);
  // Each data-parallel (and CP) rank of the layout must see C / W tokens of the level its DP
  // group crosses.
  const bool dp_crosses_nodes = e.layout.tp * e.layout.dp * e.layout.cp > c.GpusPerNode();
  b.layout_tokens = static_cast<double>(e.layout.dp * e.layout.cp) *
                    (dp_crosses_nodes ? b.tokens_per_gpu_inter : b.tokens_per_gpu_intra);
  b.batch_tokens = static_cast<double>(e.config.TokensPerIteration());
  return b;
}

StatusOr<TrainPlan> PlanTraining(const ModelSpec& m, const ClusterSpec& c, const TrainEngine& e,
                                 const TrainRequest& r) {
  SW_RETURN_IF_ERROR(TrainModel::Supports(m));
  if (!r.search_recompute && r.config.recompute_layers > m.num_layers()) {
    return FieldError("recompute", fmt::format("`recompute` full:{} recomputes more layers than "
                                               "{} has ({}): use full:1 to full:{}, or full",
                                               r.config.recompute_layers, m.name, m.num_layers(),
                                               m.num_layers()));
  }
  if (m.position_embeddings > 0 && r.config.seq_len > m.position_embeddings) {
    return Error(fmt::format("`seq_len` {} exceeds {}'s learned position table ({} positions)",
                             r.config.seq_len, m.name, m.position_embeddings));
  }
  if (r.only_layout) {
    SW_RETURN_IF_ERROR(TrainModel::Create(m, c, *r.only_layout, e).status());
    SW_RETURN_IF_ERROR(UsesEveryGpu(*r.only_layout, c, r.config.global_batch));
  }
  TrainPlan plan;
  SearchResult s = Search(m, c, e, r);
  plan.layouts_considered = s.layouts;
  plan.configs_evaluated = s.evaluated;
  plan.configs_fitting = s.fitting;
  if (s.best_per_layout.empty()) {
    if (r.only_layout) {
      // Say what is wrong with the config as asked (batch divisibility, ZeRO-3 with PP, ...).
      SW_ASSIGN_OR_RETURN(TrainModel model, TrainModel::Create(m, c, *r.only_layout, e));
      SW_RETURN_IF_ERROR(model.Estimate(r.config).status());
    }
    // Whether freeing a ZeRO stage or recompute the request fixed would find a fit.
    bool relaxed_fits = r.search_zero && r.search_recompute;
    if (!relaxed_fits) {
      TrainRequest relaxed = r;
      relaxed.search_zero = relaxed.search_recompute = true;
      relaxed_fits = !Search(m, c, e, relaxed).best_per_layout.empty();
    }
    return NothingFits(m, c, e, s, relaxed_fits);
  }
  const double usd = c.gpu.usd_per_gpu_hour;
  const double params = static_cast<double>(CountParams(m).total);
  auto cost = [&](const TrainEstimate& est) {
    return CostToTrain(est, r.reliability, params, usd, r.tokens);
  };
  const size_t shown = std::min<size_t>(r.top, s.best_per_layout.size());
  for (size_t i = 0; i < shown; ++i) {
    const TrainEstimate& est = s.best_per_layout[i];
    const TrainEstimate* next =
        i + 1 < s.best_per_layout.size() ? &s.best_per_layout[i + 1] : nullptr;
    SW_ASSIGN_OR_RETURN(TrainingCost spent, cost(est));
    plan.ranked.push_back({est, spent, Why(est, next, i)});
  }
  plan.critical = ComputeCriticalBatch(m, c, plan.ranked.front().estimate);

  if (r.sizes && !r.only_layout) {
    // Powers of two of nodes below the cluster, then the cluster itself.
    const int64_t per_node = c.GpusPerNode();
    std::vector<int64_t> sizes;
    for (int64_t g = per_node; g < c.num_gpus; g *= 2) sizes.push_back(g);
    sizes.push_back(c.num_gpus);
    for (int64_t g : sizes) {
      TrainPlanEntry best;
      if (g == c.num_gpus) {
        best = plan.ranked.front();
      } else {
        auto smaller = WithGpus(c, g);
        if (!smaller.ok()) continue;
        TrainRequest sub = r;
        sub.sizes = false;
        const SearchResult ss = Search(m, *smaller, e, sub);
        if (ss.best_per_layout.empty()) continue;
        const TrainEstimate& est = ss.best_per_layout.front();
        auto spent = cost(est);
        if (!spent.ok()) continue;
        best = {est, *spent, ConfigText(est)};
      }
      plan.sizes.push_back({g, best, false});
    }
    for (SizePoint& p : plan.sizes) {
      p.pareto = std::none_of(plan.sizes.begin(), plan.sizes.end(), [&](const SizePoint& q) {
        const bool faster_or_equal = q.best.cost.time_s <= p.best.cost.time_s;
        const bool cheaper_or_equal = q.best.cost.usd <= p.best.cost.usd;
        const bool better =
            q.best.cost.time_s < p.best.cost.time_s || q.best.cost.usd < p.best.cost.usd;
        return faster_or_equal && cheaper_or_equal && better;
      });
    }
  }
  return plan;
}

}  // namespace shardwise::train
