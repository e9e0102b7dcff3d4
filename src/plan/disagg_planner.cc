#include "shardwise/plan/disagg_planner.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

#include "shardwise/common/format.h"

namespace shardwise {
namespace {

// Worker layouts kept per pool for pairing (the best by requests per second per GPU).
constexpr size_t kPoolCandidates = 3;
// Splits (pair of worker layouts, xPyD) simulated at the load, best analytic rate first.
constexpr size_t kSimulatedSplits = 6;

struct PrefillWorker {
  Layout layout;
  EpSetting ep;
  StepEstimate estimate;  // batch 1: TTFT and instance time per request
  double requests_per_s_per_gpu = 0;
};

struct DecodeWorker {
  Layout layout;
  EpSetting ep;
  StepEstimate estimate;  // at the largest batch within the TPOT SLO
  double requests_per_s_per_gpu = 0;
};

// Worker sizes: powers of two up to half the cluster (the other half at least for the other pool).
std::vector<int64_t> WorkerSizes(int64_t gpus) {
  std::vector<int64_t> sizes;
  for (int64_t g = 1; 2 * g <= gpus; g *= 2) sizes.push_back(g);
  return sizes;
}

// One instance of each worker layout: no replicas inside a worker.
std::vector<Layout> WorkerLayouts(const ModelSpec& model, int64_t gpus, const PlanRequest& req) {
  std::vector<Layout> out;
  for (const Layout& l :
       EnumerateLayouts(model, gpus, req.workload.prompt_tokens, req.perf.redundant_experts)) {
    if (l.Replicas() == 1) out.push_back(l);
  }
  return out;
}

template <typename Worker>
void KeepBest(std::vector<Worker>& workers) {
  std::stable_sort(workers.begin(), workers.end(), [](const Worker& a, const Worker& b) {
    return a.requests_per_s_per_gpu > b.requests_per_s_per_gpu;
  });
  if (workers.size() > kPoolCandidates) workers.resize(kPoolCandidates);
}

// Requests per second a prefill-only worker turns out, as the simulator runs it: each iteration
// packs whole prompts (or a chunk of a longer one) into every attention rank's token budget.
double PrefillRequestsPerS(const StepModel& step, const PlanRequest& req) {
  const double prompt = static_cast<double>(req.workload.prompt_tokens);
  const double budget = static_cast<double>(req.perf.max_batched_tokens);
  const double prompts = prompt <= budget ? std::floor(budget / prompt) : budget / prompt;
  const double tokens = std::min(budget, prompts * prompt);
  const double iteration_s = step.PrefillIterationS(tokens, (prompt + 1) / 2);
  return static_cast<double>(step.layout().AttentionDp()) * prompts / iteration_s;
}

void AddCandidates(const ModelSpec& model, const ClusterSpec& cluster, const PlanRequest& req,
                   int64_t size, std::vector<PrefillWorker>& prefill,
                   std::vector<DecodeWorker>& decode) {
  const double osl = static_cast<double>(req.workload.output_tokens);
  for (const Layout& layout : WorkerLayouts(model, size, req)) {
    for (const EpSetting& ep : EpSettingsToTry(model, layout, req)) {
      PerfOptions perf = req.perf;
      perf.ep = ep;
      auto step = StepModel::Create(model, cluster, layout, perf);
      if (!step.ok()) break;
      Workload w = req.workload;
      w.batch = 1;
      const PrefillEstimate pre = step->EstimatePrefill(w.prompt_tokens);
      const StepEstimate one = step->Estimate(w, pre);
      if (!one.memory.Fits()) break;
      const double gpus = static_cast<double>(layout.gpus());
      if (one.ttft_s <= req.max_ttft_s) {
        prefill.push_back({layout, ep, one, PrefillRequestsPerS(*step, req) / gpus});
      }
      // Decode: the largest batch (powers of two up to what fits) within the TPOT SLO.
      const int64_t cap = std::min<int64_t>(std::max<int64_t>(1, one.memory.max_sequences),
                                            req.max_batch * layout.AttentionDp());
      std::optional<DecodeWorker> best;
      for (int64_t b = 1;; b = std::min(cap, 2 * b)) {
        w.batch = b;
        const StepEstimate e = step->Estimate(w, pre);
        if (!e.memory.Fits() || e.tpot_s > req.max_tpot_s) break;
        const double rate = static_cast<double>(b) / (osl * e.tpot_s) / gpus;
        if (!best || rate > best->requests_per_s_per_gpu) best = DecodeWorker{layout, ep, e, rate};
        if (b == cap) break;
      }
      if (best) decode.push_back(*best);
    }
  }
}

// Higher is better: what the objective wants of a simulated operating point.
double Score(Objective objective, const OperatingPoint& p) {
  return objective == Objective::kLatency ? -p.tpot.mean_s : p.output_tokens_per_s_per_gpu;
}

// Fills the split's KV transfer and unloaded TTFT, then simulates it at the request's load; the
// split keeps no operating point when it cannot serve the load within the SLOs.
Status AtLoad(const ModelSpec& model, const ClusterSpec& cluster, const PlanRequest& req,
              DisaggPlanEntry& e) {
  const double prompt = static_cast<double>(req.workload.prompt_tokens);
  const double osl = static_cast<double>(req.workload.output_tokens);
  e.link = PoolLink(cluster, cluster, true, e.deployment.Gpus());
  e.transfer = EstimateKvTransfer(
      e.link, e.prefill.memory.kv_bytes_per_token, e.decode.memory.kv_bytes_per_token,
      e.deployment.transfer, e.prefill.ttft_s / prompt, static_cast<double>(model.num_layers()));
  e.ttft_s = e.prefill.ttft_s + e.transfer.latency_s + e.transfer.exposed_s_per_token * prompt;
  e.tpot_s = e.decode.tpot_s;
  if (e.ttft_s > req.max_ttft_s) return Status();
  PerfOptions prefill_perf = req.perf, decode_perf = req.perf;
  prefill_perf.ep = e.prefill_ep;
  decode_perf.ep = e.decode_ep;
  SW_ASSIGN_OR_RETURN(StepModel prefill_step,
                      StepModel::Create(model, cluster, e.deployment.prefill.layout, prefill_perf));
  SW_ASSIGN_OR_RETURN(StepModel decode_step,
                      StepModel::Create(model, cluster, e.deployment.decode->layout, decode_perf));
  // Offline: as many clients as the split keeps in flight at its analytic rate (Little's law).
  const double rate = std::min(e.prefill_requests_per_s, e.decode_requests_per_s);
  const double offline_clients = std::max(1.0, std::ceil(rate * (e.ttft_s + osl * e.tpot_s)));
  auto point =
      SimulateDisaggregatedPoint(model, cluster, e.deployment, prefill_step, decode_step, req.perf,
                                 req.workload, req.max_batch, req.load, offline_clients);
  if (!point.ok()) return Status();  // the decode pool cannot hold this load
  if (point->ttft.mean_s > req.max_ttft_s || point->tpot.mean_s > req.max_tpot_s) {
    return Status();
  }
  e.at_load = *point;
  e.why = fmt::format(
      "{}: prefill workers {} ({:.2f} requests/s each at full load, TTFT {}), decode workers {} "
      "at batch {} with no prompt chunks in their steps (TPOT {}); KV {} over {}; simulated at "
      "{:.0f} requests in flight: TTFT {}, TPOT {}, {:.0f} tokens/s per GPU",
      e.deployment.ToString(), e.deployment.prefill.layout.ToString(),
      e.prefill_requests_per_s / static_cast<double>(e.deployment.prefill.workers),
      FormatSeconds(e.prefill.ttft_s), e.deployment.decode->layout.ToString(),
      e.decode.workload.batch, FormatSeconds(e.tpot_s),
      FormatSeconds(e.transfer.latency_s + e.transfer.exposed_s_per_token * prompt), e.link.name,
      point->concurrency, FormatSeconds(point->ttft.mean_s), FormatSeconds(point->tpot.mean_s),
      point->output_tokens_per_s_per_gpu);
  return Status();
}

}  // namespace

StatusOr<std::optional<DisaggPlanEntry>> PlanDisaggregated(const ModelSpec& model,
                                                           const ClusterSpec& cluster,
                                                           const PlanRequest& req) {
  std::vector<PrefillWorker> prefill;
  std::vector<DecodeWorker> decode;
  for (int64_t size : WorkerSizes(cluster.num_gpus)) {
    AddCandidates(model, cluster, req, size, prefill, decode);
  }
  KeepBest(prefill);
  KeepBest(decode);
  const double osl = static_cast<double>(req.workload.output_tokens);
  std::vector<DisaggPlanEntry> splits;
  for (const PrefillWorker& p : prefill) {
    for (const DecodeWorker& d : decode) {
      const int64_t gp = p.layout.gpus(), gd = d.layout.gpus();
      const double rp = p.requests_per_s_per_gpu * static_cast<double>(gp);
      const double rd = d.requests_per_s_per_gpu * static_cast<double>(gd);
      // xPyD within the cluster's GPUs: for each x, the decode workers just below and above
      // the balance x rp = y rd.
      for (int64_t x = 1; x * gp + gd <= cluster.num_gpus; ++x) {
        const int64_t most = (cluster.num_gpus - x * gp) / gd;
        const double balance = static_cast<double>(x) * rp / rd;
        for (int64_t y : {static_cast<int64_t>(std::floor(balance)),
                          static_cast<int64_t>(std::ceil(balance))}) {
          y = std::clamp<int64_t>(y, 1, most);
          DisaggPlanEntry e;
          e.deployment.prefill = {p.layout, x};
          e.deployment.decode = Pool{d.layout, y};
          e.prefill_ep = p.ep;
          e.decode_ep = d.ep;
          e.prefill = p.estimate;
          e.decode = d.estimate;
          e.prefill_requests_per_s = static_cast<double>(x) * rp;
          e.decode_requests_per_s = static_cast<double>(y) * rd;
          e.output_tokens_per_s = std::min(e.prefill_requests_per_s, e.decode_requests_per_s) * osl;
          e.output_tokens_per_s_per_gpu =
              e.output_tokens_per_s / static_cast<double>(x * gp + y * gd);
          splits.push_back(e);
        }
      }
    }
  }
  // Best first by the analytic rate; the load decides among the leaders.
  std::stable_sort(splits.begin(), splits.end(), [](const auto& a, const auto& b) {
    return a.output_tokens_per_s_per_gpu > b.output_tokens_per_s_per_gpu;
  });
  std::optional<DisaggPlanEntry> best;
  std::set<std::string> simulated;
  for (size_t i = 0; i < splits.size() && simulated.size() < kSimulatedSplits; ++i) {
    DisaggPlanEntry e = splits[i];
    const std::string key =
        fmt::format("{} {}{}{} {}{}{}", e.deployment.ToString(),
                    EpAlgorithmName(e.prefill_ep.algorithm), DtypeName(e.prefill_ep.dispatch_dtype),
                    e.prefill_ep.two_batch_overlap, EpAlgorithmName(e.decode_ep.algorithm),
                    DtypeName(e.decode_ep.dispatch_dtype), e.decode_ep.two_batch_overlap);
    if (!simulated.insert(key).second) continue;
    SW_RETURN_IF_ERROR(AtLoad(model, cluster, req, e));
    if (!e.at_load) continue;
    if (!best || Score(req.objective, *e.at_load) > Score(req.objective, *best->at_load)) {
      best = std::move(e);
    }
  }
  return best;
}

}  // namespace shardwise
