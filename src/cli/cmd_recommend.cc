// `shardwise recommend`: the fewest GPUs (layout and replicas) that serve a request rate within
// TTFT and TPOT SLOs at a percentile, or, without --rate, the most load a cluster serves so.
// The planner proposes layouts; the serving simulator judges each at the stated load.
#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <optional>

#include "cluster_options.h"
#include "command.h"
#include "metric_json.h"
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
constexpr size_t kMaxClusters = 8;  // clusters one run compares

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
  std::string objective = "gpus";
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
  std::string cluster;  // catalog name, as given to --cluster
  std::string gpu;
  int64_t gpus = 0;
  std::string layout;
  int64_t replicas = 0;
  double capacity_per_s = 0;  // requests/s at the planner's batch, unloaded by queueing
  double rate_per_s = 0;
  double ttft_s = 0, tpot_s = 0;                  // at the percentile; 0 when not simulated
  nlohmann::json ttft = nullptr, tpot = nullptr;  // their distributions (metric_json.h)
  bool meets = false;
  double usd_per_mtok_output = 0;  // at rate_per_s, when it meets the SLOs
  std::string note;
};

nlohmann::json CandidateJson(const Candidate& c) {
  nlohmann::json j = {{"cluster", c.cluster},
                      {"gpu", c.gpu},
                      {"gpus", c.gpus},
                      {"layout", c.layout},
                      {"replicas", c.replicas},
                      {"capacity_requests_per_s", c.capacity_per_s},
                      {"rate_requests_per_s", c.rate_per_s},
                      {"ttft_s", c.ttft},
                      {"tpot_s", c.tpot},
                      {"meets_slo", c.meets},
                      {"usd_per_mtok_output", nullptr},
                      {"note", c.note}};
  if (c.meets) j["usd_per_mtok_output"] = c.usd_per_mtok_output;
  return j;
}

// What every search shares: the model, formats, planner request, load and SLOs.
struct Search {
  const ModelSpec& model;
  PerfOptions perf;
  PlanRequest req;
  LoadSpec load;
  double percentile = 99;
  double max_ttft_s = 0, max_tpot_s = 0;
};

// The GPUs are paid for every second; tokens come at the rate served.
double UsdPerMtok(const ClusterSpec& cluster, int64_t gpus, double rate_per_s, int64_t osl) {
  return static_cast<double>(gpus) * cluster.gpu.usd_per_gpu_hour / 3600.0 /
         (rate_per_s * static_cast<double>(osl)) * 1e6;
}

Candidate NewCandidate(const std::string& name, const ClusterSpec& cluster, int64_t gpus,
                       const PlanEntry& p, int64_t osl) {
  Candidate c;
  c.cluster = name;
  c.gpu = cluster.gpu.name;
  c.gpus = gpus;
  c.layout = p.estimate.layout.ToString();
  c.replicas = p.estimate.layout.Replicas();
  c.capacity_per_s = p.estimate.output_tokens_per_s / static_cast<double>(osl);
  return c;
}

// Fewest GPUs of `cluster`'s kind serving `rate`: grow the deployment until a planned layout
// passes the simulated SLOs. Appends every candidate to `tried`.
StatusOr<std::optional<Candidate>> FewestGpus(Search s, const std::string& name,
                                              const ClusterSpec& cluster, double rate,
                                              int64_t max_gpus, std::vector<Candidate>& tried) {
  s.load.rate_per_s = rate;
  for (int64_t gpus : Sizes(cluster, max_gpus)) {
    auto sized = Sized(cluster, gpus);
    if (!sized.ok()) break;
    auto plan = Plan(s.model, sized.value(), s.req);
    if (!plan.ok()) continue;  // nothing fits or meets the unloaded SLOs at this size
    for (const PlanEntry& p : plan.value().ranked) {
      Candidate c = NewCandidate(name, cluster, gpus, p, s.load.osl);
      c.rate_per_s = rate;
      if (c.capacity_per_s < rate) {
        c.note = "below the rate even fully batched";
        tried.push_back(c);
        continue;
      }
      SW_ASSIGN_OR_RETURN(ServeCheck check,
                          CheckServing(s.model, sized.value(), p.estimate.layout, s.perf, s.load,
                                       s.percentile, s.max_ttft_s, s.max_tpot_s));
      c.ttft_s = check.ttft_s;
      c.tpot_s = check.tpot_s;
      c.ttft = PercentileJson(check.sim.ttft_s, s.percentile);
      c.tpot = PercentileJson(check.sim.tpot_s, s.percentile);
      c.meets = check.meets;
      c.note = c.meets ? "meets the SLOs" : "misses the SLOs under queueing";
      if (c.meets) c.usd_per_mtok_output = UsdPerMtok(cluster, gpus, rate, s.load.osl);
      tried.push_back(c);
      if (c.meets) return std::optional<Candidate>(c);
    }
  }
  return std::optional<Candidate>();
}

// The most load `cluster` serves: bisect the rate for each of the planner's top layouts.
StatusOr<std::optional<Candidate>> MostLoad(Search s, const std::string& name,
                                            const ClusterSpec& cluster,
                                            std::vector<Candidate>& tried) {
  SW_ASSIGN_OR_RETURN(PlanResult plan, Plan(s.model, cluster, s.req));
  std::optional<Candidate> best;
  for (const PlanEntry& p : plan.ranked) {
    Candidate c = NewCandidate(name, cluster, cluster.num_gpus, p, s.load.osl);
    double lo = 0, hi = 1.1 * c.capacity_per_s;
    for (int i = 0; i < kBisections; ++i) {
      s.load.rate_per_s = (lo + hi) / 2;
      SW_ASSIGN_OR_RETURN(ServeCheck check,
                          CheckServing(s.model, cluster, p.estimate.layout, s.perf, s.load,
                                       s.percentile, s.max_ttft_s, s.max_tpot_s));
      if (check.meets) {
        lo = s.load.rate_per_s;
        c.ttft_s = check.ttft_s;
        c.tpot_s = check.tpot_s;
        c.ttft = PercentileJson(check.sim.ttft_s, s.percentile);
        c.tpot = PercentileJson(check.sim.tpot_s, s.percentile);
      } else {
        hi = s.load.rate_per_s;
      }
    }
    c.rate_per_s = lo;
    c.meets = lo > 0;
    c.note = c.meets ? "most load within the SLOs" : "misses the SLOs at any rate tried";
    if (c.meets) c.usd_per_mtok_output = UsdPerMtok(cluster, c.gpus, lo, s.load.osl);
    tried.push_back(c);
    if (c.meets && (!best || c.rate_per_s > best->rate_per_s)) best = c;
  }
  return best;
}

// Whether `a` is a better answer than `b`: the lower cost with --objective cost, else the
// fewer GPUs (with --rate) or the more load (without), the lower cost breaking ties.
bool Better(const Candidate& a, const Candidate& b, bool cost, bool forward) {
  if (!cost) {
    if (forward && a.gpus != b.gpus) return a.gpus < b.gpus;
    if (!forward && a.rate_per_s != b.rate_per_s) return a.rate_per_s > b.rate_per_s;
  }
  return a.usd_per_mtok_output < b.usd_per_mtok_output;
}

std::vector<std::string> SplitNames(const std::string& text) {
  std::vector<std::string> names;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    names.push_back(text.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return names;
}

Status RunRecommend(const RecommendOptions& o) {
  SW_ASSIGN_OR_RETURN(ModelSpec model, LoadModel(o.model));
  SW_ASSIGN_OR_RETURN(PerfOptions perf, o.perf.Build(model));
  SW_ASSIGN_OR_RETURN(double percentile, ParsePercentile(o.percentile));
  if (o.objective != "gpus" && o.objective != "cost") {
    return Error(fmt::format("--objective '{}': use gpus (the default) or cost", o.objective));
  }
  const std::vector<std::string> names = SplitNames(o.cluster.cluster);
  if (names.size() > kMaxClusters) {
    return Error(fmt::format("--cluster names {} clusters; compare at most {} at once",
                             names.size(), kMaxClusters));
  }
  if (names.size() > 1 && !o.cluster.profile.empty()) {
    return Error("--profile measures one cluster; give a single --cluster with it");
  }
  std::vector<ClusterSpec> clusters;
  for (const std::string& name : names) {
    if (name.empty()) {
      return Error("--cluster has an empty name; separate clusters with single commas");
    }
    ClusterOptions one = o.cluster;
    one.cluster = name;
    SW_ASSIGN_OR_RETURN(ClusterSpec c, one.Load());
    clusters.push_back(std::move(c));
  }
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
  if (o.max_gpus < 1 || o.max_gpus > 100'000) {
    return Error("--max-gpus must be between 1 and 100,000");
  }
  if (o.requests < 50 || o.requests > 1'000'000) {
    return Error("--requests must be between 50 and 1,000,000");
  }
  for (const ClusterSpec& c : clusters) PrintFormatNotes(c.gpu, perf);
  Search search{model, perf, {}, {}, percentile, o.max_ttft_ms * 1e-3, o.max_tpot_ms * 1e-3};
  search.req.perf = perf;
  search.req.workload.prompt_tokens = o.isl;
  search.req.workload.output_tokens = o.osl;
  search.req.max_ttft_s = search.max_ttft_s;
  search.req.max_tpot_s = search.max_tpot_s;
  search.req.top = kLayoutsPerSize;
  search.load.isl = o.isl;
  search.load.osl = o.osl;
  search.load.requests = o.requests;
  search.load.seed = o.seed;

  const bool forward = o.rate > 0, cost = o.objective == "cost";
  std::vector<Candidate> tried;
  std::optional<Candidate> best;
  for (size_t i = 0; i < clusters.size(); ++i) {
    std::optional<Candidate> found;
    if (forward) {
      SW_ASSIGN_OR_RETURN(found,
                          FewestGpus(search, names[i], clusters[i], o.rate, o.max_gpus, tried));
    } else {
      SW_ASSIGN_OR_RETURN(found, MostLoad(search, names[i], clusters[i], tried));
    }
    if (found && (!best || Better(*found, *best, cost, forward))) best = found;
  }
  if (!best) {
    return Error(forward ? fmt::format("no deployment of up to {} GPUs serves {:g} requests/s "
                                       "within the SLOs; raise --max-gpus or relax the SLOs",
                                       o.max_gpus, o.rate)
                         : "no layout of this cluster meets the SLOs at any load; relax the SLOs "
                           "or add GPUs");
  }
  const std::string pname = fmt::format("p{:g}", percentile);
  if (o.json) {
    nlohmann::json all = nlohmann::json::array();
    for (const Candidate& c : tried) all.push_back(CandidateJson(c));
    nlohmann::json out = {
        {"command", "recommend"},
        {"model", model.name},
        {"cluster", best->cluster},
        {"gpu", best->gpu},
        {"clusters_considered", names},
        {"objective", o.objective},
        {"mode", forward ? "fewest_gpus" : "most_load"},
        {"isl", o.isl},
        {"osl", o.osl},
        {"percentile", percentile},
        {"slo", {{"max_ttft_s", search.max_ttft_s}, {"max_tpot_s", search.max_tpot_s}}},
        {"candidates", all},
        {"recommendation", CandidateJson(*best)}};
    if (forward) out["rate_requests_per_s"] = o.rate;
    PrintJson(out);
    return Status();
  }
  std::string where;
  for (const ClusterSpec& c : clusters) where += (where.empty() ? "" : ", ") + c.gpu.name;
  std::cout << fmt::format(
      "recommend: {} on {} GPUs, ISL {} / OSL {}, SLOs at {}: TTFT <= {} and TPOT <= {}\n{}{}\n\n",
      model.name, where, o.isl, o.osl, pname, FormatSeconds(search.max_ttft_s),
      FormatSeconds(search.max_tpot_s),
      forward ? fmt::format("fewest GPUs for {:g} requests/s (Poisson, {} simulated requests)",
                            o.rate, o.requests)
              : fmt::format("most load {} serves",
                            clusters.size() == 1
                                ? fmt::format("{} ({} GPUs)", names[0], clusters[0].num_gpus)
                                : std::string("each cluster")),
      cost ? "; ranked by $ per million output tokens at that load" : "");
  const bool several = clusters.size() > 1;
  std::vector<std::string> header = {"GPUs",          "layout", "replicas",
                                     "max req/s",     "req/s",  "TTFT " + pname,
                                     "TPOT " + pname, "$/Mtok", "verdict"};
  if (several) header.insert(header.begin(), "cluster");
  Table table(header);
  table.SetLeftAligned(several ? std::vector<size_t>{0, 2, 9} : std::vector<size_t>{1, 8});
  for (const Candidate& c : tried) {
    const bool simulated = c.ttft_s > 0;
    std::vector<std::string> row = {std::to_string(c.gpus),
                                    c.layout,
                                    std::to_string(c.replicas),
                                    fmt::format("{:.2f}", c.capacity_per_s),
                                    fmt::format("{:.2f}", c.rate_per_s),
                                    simulated ? FormatSeconds(c.ttft_s) : "-",
                                    simulated ? FormatSeconds(c.tpot_s) : "-",
                                    c.meets ? fmt::format("{:.3f}", c.usd_per_mtok_output) : "-",
                                    c.note};
    if (several) row.insert(row.begin(), c.cluster);
    table.AddRow(row);
  }
  std::cout << table.Render() << "\n";
  std::cout << fmt::format(
      "=> {} x {} ({}) as {} ({} replica{}) serves {:.2f} requests/s with {} TTFT {} and TPOT {}; "
      "${:.3f} per million output tokens at that load\n",
      best->gpus, best->gpu, best->cluster, best->layout, best->replicas,
      best->replicas == 1 ? "" : "s", best->rate_per_s, pname, FormatSeconds(best->ttft_s),
      FormatSeconds(best->tpot_s), best->usd_per_mtok_output);
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
      "      --max-ttft-ms 1000 --max-tpot-ms 50\n"
      "Several clusters (comma-separated) are searched in turn; --objective cost picks the\n"
      "cheapest per token at the load:\n"
      "  shardwise recommend --model llama-3.1-70b --cluster dgx-h100,dgx-a100,dgx-b200 \\\n"
      "      --rate 20 --max-ttft-ms 1000 --max-tpot-ms 50 --objective cost");
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
  sub->add_option("--objective", opts->objective,
                  "gpus: the fewest GPUs for the rate (or the most load of the GPUs given); "
                  "cost: the lowest $ per million output tokens at the load")
      ->capture_default_str();
  sub->add_flag("--json", opts->json, "Print JSON");
  BindCommand(sub, opts, result, RunRecommend);
}

}  // namespace shardwise::cli
