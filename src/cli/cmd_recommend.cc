// `shardwise recommend`: the fewest GPUs (layout and replicas) that serve a request rate within
// TTFT and TPOT SLOs at a percentile, or, without --rate, the most load a cluster serves so.
// The planner proposes layouts; the serving simulator judges each at the stated load.
#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <optional>

#include "cluster_options.h"
#include "command.h"
#include "perf_options.h"
#include "serving_check.h"
#include "shardwise/common/format.h"
#include "shardwise/model/catalog.h"
#include "shardwise/plan/planner.h"
#include "shardwise/report/table.h"

namespace shardwise::cli {
namespace {

constexpr int kLayoutsPerSize = 3;  // simulated candidates per cluster size
constexpr int kBisections = 7;      // rate search steps: within 1% of the range

struct RecommendOptions {
  std::string model = "llama-3.1-70b";
  ClusterOptions cluster;
  PerfCliOptions perf;
  double rate = 0;  // 0: find the most load the cluster serves
  int64_t isl = 1024;
  int64_t osl = 256;
  double max_ttft_ms = 0;
  double max_tpot_ms = 0;
  std::string percentile = "p99";
  int64_t max_gpus = 256;
  int64_t requests = 1000;
  uint64_t seed = 1;
  bool json = false;
};

StatusOr<double> ParsePercentile(const std::string& text) {
  std::string digits = text;
  if (!digits.empty() && (digits[0] == 'p' || digits[0] == 'P')) digits.erase(0, 1);
  try {
    size_t used = 0;
    const double p = std::stod(digits, &used);
    if (used == digits.size() && p > 0 && p < 100) return p;
  } catch (...) {
  }
  return Error(
      fmt::format("--percentile '{}' must be p50, p90, p99 or a number in (0, 100)", text));
}

// Cluster sizes to try: 1, 2, 4, ... up to a node, then whole nodes, up to `max_gpus`.
std::vector<int64_t> Sizes(const ClusterSpec& node, int64_t max_gpus) {
  std::vector<int64_t> sizes;
  const int64_t per_node = node.GpusPerNode();
  for (int64_t n = 1; n < per_node && n <= max_gpus; n *= 2) sizes.push_back(n);
  for (int64_t n = per_node; n <= max_gpus; n += per_node) sizes.push_back(n);
  return sizes;
}

StatusOr<ClusterSpec> Sized(const ClusterSpec& node, int64_t gpus) {
  if (gpus <= node.num_gpus) return WithGpus(node, gpus);
  return WithNodes(node, gpus / node.GpusPerNode());
}

struct Candidate {
  int64_t gpus = 0;
  std::string layout;
  int64_t replicas = 0;
  double capacity_per_s = 0;  // requests/s at the planner's batch, unloaded by queueing
  double rate_per_s = 0;
  double ttft_s = 0, tpot_s = 0;
  bool meets = false;
  std::string note;
};

nlohmann::json CandidateJson(const Candidate& c) {
  return {{"gpus", c.gpus},
          {"layout", c.layout},
          {"replicas", c.replicas},
          {"capacity_requests_per_s", c.capacity_per_s},
          {"rate_requests_per_s", c.rate_per_s},
          {"ttft_s", c.ttft_s},
          {"tpot_s", c.tpot_s},
          {"meets_slo", c.meets},
          {"note", c.note}};
}

Status RunRecommend(const RecommendOptions& o) {
  SW_ASSIGN_OR_RETURN(ModelSpec model, LoadModel(o.model));
  SW_ASSIGN_OR_RETURN(ClusterSpec cluster, o.cluster.Load());
  SW_ASSIGN_OR_RETURN(PerfOptions perf, o.perf.Build());
  SW_ASSIGN_OR_RETURN(double percentile, ParsePercentile(o.percentile));
  if (!(o.max_ttft_ms > 0) || !(o.max_tpot_ms > 0) || !std::isfinite(o.max_ttft_ms) ||
      !std::isfinite(o.max_tpot_ms)) {
    return Error("recommend needs both SLOs: --max-ttft-ms and --max-tpot-ms (e.g. 1000 and 50)");
  }
  if (o.rate < 0 || !std::isfinite(o.rate) || o.rate > 1e6) {
    return Error("--rate must be requests per second between 0 and 1,000,000 (0: find the most)");
  }
  if (o.isl < 1 || o.osl < 1 || o.isl > 1'000'000 || o.osl > 1'000'000) {
    return Error("--isl and --osl must be between 1 and 1,000,000");
  }
  if (o.max_gpus < 1 || o.max_gpus > 100'000)
    return Error("--max-gpus must be between 1 and 100,000");
  if (o.requests < 50 || o.requests > 1'000'000)
    return Error("--requests must be between 50 and 1,000,000");
  PrintFormatNotes(cluster.gpu, perf);
  const double max_ttft_s = o.max_ttft_ms * 1e-3, max_tpot_s = o.max_tpot_ms * 1e-3;
  PlanRequest req;
  req.perf = perf;
  req.workload.prompt_tokens = o.isl;
  req.workload.output_tokens = o.osl;
  req.max_ttft_s = max_ttft_s;
  req.max_tpot_s = max_tpot_s;
  req.top = kLayoutsPerSize;
  LoadSpec load;
  load.isl = o.isl;
  load.osl = o.osl;
  load.requests = o.requests;
  load.seed = o.seed;

  std::vector<Candidate> tried;
  std::optional<Candidate> best;
  const bool forward = o.rate > 0;
  if (forward) {
    // Fewest GPUs: grow the deployment until a planned layout passes the simulated SLOs.
    for (int64_t gpus : Sizes(cluster, o.max_gpus)) {
      auto sized = Sized(cluster, gpus);
      if (!sized.ok()) break;
      auto plan = Plan(model, sized.value(), req);
      if (!plan.ok()) continue;  // nothing fits or meets the unloaded SLOs at this size
      for (const PlanEntry& p : plan.value().ranked) {
        Candidate c;
        c.gpus = gpus;
        c.layout = p.estimate.layout.ToString();
        c.replicas = p.estimate.layout.Replicas();
        c.capacity_per_s = p.estimate.output_tokens_per_s / static_cast<double>(o.osl);
        c.rate_per_s = o.rate;
        if (c.capacity_per_s < o.rate) {
          c.note = "below the rate even fully batched";
          tried.push_back(c);
          continue;
        }
        load.rate_per_s = o.rate;
        SW_ASSIGN_OR_RETURN(ServeCheck check,
                            CheckServing(model, sized.value(), p.estimate.layout, perf, load,
                                         percentile, max_ttft_s, max_tpot_s));
        c.ttft_s = check.ttft_s;
        c.tpot_s = check.tpot_s;
        c.meets = check.meets;
        c.note = c.meets ? "meets the SLOs" : "misses the SLOs under queueing";
        tried.push_back(c);
        if (c.meets) break;
      }
      if (!tried.empty() && tried.back().meets) {
        best = tried.back();
        break;
      }
    }
  } else {
    // The most load: bisect the rate for each of the planner's top layouts on this cluster.
    SW_ASSIGN_OR_RETURN(PlanResult plan, Plan(model, cluster, req));
    for (const PlanEntry& p : plan.ranked) {
      Candidate c;
      c.gpus = cluster.num_gpus;
      c.layout = p.estimate.layout.ToString();
      c.replicas = p.estimate.layout.Replicas();
      c.capacity_per_s = p.estimate.output_tokens_per_s / static_cast<double>(o.osl);
      double lo = 0, hi = 1.1 * c.capacity_per_s;
      for (int i = 0; i < kBisections; ++i) {
        load.rate_per_s = (lo + hi) / 2;
        SW_ASSIGN_OR_RETURN(ServeCheck check,
                            CheckServing(model, cluster, p.estimate.layout, perf, load, percentile,
                                         max_ttft_s, max_tpot_s));
        if (check.meets) {
          lo = load.rate_per_s;
          c.ttft_s = check.ttft_s;
          c.tpot_s = check.tpot_s;
        } else {
          hi = load.rate_per_s;
        }
      }
      c.rate_per_s = lo;
      c.meets = lo > 0;
      c.note = c.meets ? "most load within the SLOs" : "misses the SLOs at any rate tried";
      tried.push_back(c);
      if (c.meets && (!best || c.rate_per_s > best->rate_per_s)) best = c;
    }
  }

  if (!best) {
    return Error(forward ? fmt::format("no deployment of up to {} GPUs serves {:g} requests/s "
                                       "within the SLOs; raise --max-gpus or relax the SLOs",
                                       o.max_gpus, o.rate)
                         : "no layout of this cluster meets the SLOs at any load; relax the SLOs "
                           "or add GPUs");
  }
  const double usd_per_gpu_s = cluster.gpu.usd_per_gpu_hour / 3600.0;
  auto usd_per_mtok = [&](const Candidate& c) {
    return static_cast<double>(c.gpus) * usd_per_gpu_s /
           (c.rate_per_s * static_cast<double>(o.osl)) * 1e6;
  };
  const std::string pname = fmt::format("p{:g}", percentile);
  if (o.json) {
    nlohmann::json all = nlohmann::json::array();
    for (const Candidate& c : tried) all.push_back(CandidateJson(c));
    nlohmann::json out = {{"command", "recommend"},
                          {"model", model.name},
                          {"cluster", cluster.name},
                          {"gpu", cluster.gpu.name},
                          {"mode", forward ? "fewest_gpus" : "most_load"},
                          {"isl", o.isl},
                          {"osl", o.osl},
                          {"percentile", percentile},
                          {"slo", {{"max_ttft_s", max_ttft_s}, {"max_tpot_s", max_tpot_s}}},
                          {"candidates", all},
                          {"recommendation", nullptr}};
    if (best) {
      out["recommendation"] = CandidateJson(*best);
      out["recommendation"]["usd_per_mtok_output"] = usd_per_mtok(*best);
    }
    if (forward) out["rate_requests_per_s"] = o.rate;
    PrintJson(out);
  } else {
    std::cout << fmt::format(
        "recommend: {} on {} GPUs, ISL {} / OSL {}, SLOs at {}: TTFT <= {} and TPOT <= {}\n{}\n\n",
        model.name, cluster.gpu.name, o.isl, o.osl, pname, FormatSeconds(max_ttft_s),
        FormatSeconds(max_tpot_s),
        forward ? fmt::format("fewest GPUs for {:g} requests/s (Poisson, {} simulated requests)",
                              o.rate, o.requests)
                : fmt::format("most load {} ({} GPUs) serves", cluster.name, cluster.num_gpus));
    Table table({"GPUs", "layout", "replicas", "max req/s", "req/s", "TTFT " + pname,
                 "TPOT " + pname, "verdict"});
    table.SetLeftAligned({1, 7});
    for (const Candidate& c : tried) {
      const bool simulated = c.ttft_s > 0;
      table.AddRow({std::to_string(c.gpus), c.layout, std::to_string(c.replicas),
                    fmt::format("{:.2f}", c.capacity_per_s), fmt::format("{:.2f}", c.rate_per_s),
                    simulated ? FormatSeconds(c.ttft_s) : "-",
                    simulated ? FormatSeconds(c.tpot_s) : "-", c.note});
    }
    std::cout << table.Render() << "\n";
    if (best) {
      std::cout << fmt::format(
          "=> {} x {} as {} ({} replica{}) serves {:.2f} requests/s with {} TTFT {} and TPOT {}; "
          "${:.3f} per million output tokens at that load\n",
          best->gpus, cluster.gpu.name, best->layout, best->replicas,
          best->replicas == 1 ? "" : "s", best->rate_per_s, pname, FormatSeconds(best->ttft_s),
          FormatSeconds(best->tpot_s), usd_per_mtok(*best));
    }
  }
  return Status();
}

}  // namespace

void AddRecommendCommand(CLI::App& app, Status& result) {
  auto opts = std::make_shared<RecommendOptions>();
  CLI::App* sub = app.add_subcommand(
      "recommend",
      "The fewest GPUs (layout and replicas) that serve a request rate within TTFT and TPOT\n"
      "SLOs at a percentile; without --rate, the most load the given cluster serves so. The\n"
      "planner proposes layouts, the serving simulator checks each at the load. Examples:\n"
      "  shardwise recommend --model llama-3.1-70b --cluster dgx-h100 --rate 20 \\\n"
      "      --max-ttft-ms 1000 --max-tpot-ms 50 --percentile p99\n"
      "  shardwise recommend --model llama-3.1-70b --cluster dgx-h100 --nodes 2 \\\n"
      "      --max-ttft-ms 1000 --max-tpot-ms 50");
  sub->add_option("--model", opts->model, "Catalog model or config.json")->capture_default_str();
  opts->cluster.AddTo(sub);
  opts->perf.AddTo(sub);
  sub->add_option("--rate", opts->rate, "Requests per second to serve (omit: find the most)");
  sub->add_option("--isl", opts->isl, "Prompt tokens per request")->capture_default_str();
  sub->add_option("--osl", opts->osl, "Output tokens per request")->capture_default_str();
  sub->add_option("--max-ttft-ms", opts->max_ttft_ms, "SLO: time to first token (required)");
  sub->add_option("--max-tpot-ms", opts->max_tpot_ms, "SLO: time per output token (required)");
  sub->add_option("--percentile", opts->percentile, "Where the SLOs hold: p50, p90, p99, ...")
      ->capture_default_str();
  sub->add_option("--max-gpus", opts->max_gpus, "Largest deployment to try (with --rate)")
      ->capture_default_str();
  sub->add_option("--requests", opts->requests, "Requests simulated per check")
      ->capture_default_str();
  sub->add_option("--seed", opts->seed, "Random seed of the arrivals")->capture_default_str();
  sub->add_flag("--json", opts->json, "Print JSON");
  BindCommand(sub, opts, result, RunRecommend);
}

}  // namespace shardwise::cli
