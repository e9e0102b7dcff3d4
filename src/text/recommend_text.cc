// `shardwise recommend` as text: the question, every candidate tried with its verdict, and the
// answer with its price (text/text.h).
#include <fmt/format.h>

#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "cost_text.h"
#include "shardwise/common/format.h"
#include "shardwise/report/table.h"
#include "shardwise/text/text.h"

namespace shardwise::text {
namespace {

// The deployment's name and, where its pools exchange tokens over EP, how (candidates differ by
// it alone: "dp8ep8 (deepep-normal fp8)").
std::string CandidateName(const Deployment& d) {
  std::string exchange;
  for (const Pool& pool : d.pools()) {
    if (pool.layout.ep <= 1) continue;
    const EpSetting& ep = pool.perf.ep;
    exchange +=
        fmt::format("{}{} {}{}", exchange.empty() ? "" : ", ", EpAlgorithmName(ep.algorithm),
                    DtypeName(ep.dispatch_dtype), ep.two_batch_overlap ? " tbo" : "");
  }
  return exchange.empty() ? d.ToString() : fmt::format("{} ({})", d.ToString(), exchange);
}

std::string Candidates(const api::RecommendReport& rep) {
  const std::string pct = rep.request.plan.slo.PercentileName();
  const bool several = rep.clusters.size() > 1;
  std::vector<std::string> header = {"GPUs",        "deployment",  "est. max req/s", "req/s",
                                     "TTFT " + pct, "TPOT " + pct, "$/Mtok",         "verdict"};
  if (several) header.insert(header.begin(), "cluster");
  Table table(header);
  table.SetLeftAligned(several ? std::vector<size_t>{0, 2, 8} : std::vector<size_t>{1, 7});
  for (const RecommendCandidate& c : rep.result.tried) {
    std::vector<std::string> row = {
        std::to_string(c.deployment.gpus()),
        CandidateName(c.deployment),
        fmt::format("{:.2f}", c.capacity_requests_per_s),
        fmt::format("{:.2f}", c.rate_per_s),
        c.point ? FormatSeconds(c.point->ttft.at_slo_s) : "-",
        c.point ? FormatSeconds(c.point->tpot.at_slo_s) : "-",
        c.meets ? fmt::format("{:.3f}", c.point->usd_per_mtok_output) : "-",
        c.note};
    if (several) row.insert(row.begin(), c.cluster);
    table.AddRow(row);
  }
  std::string out = table.Render();
  if (rep.request.rate_per_s > 0) out += "(candidates in the order simulated)\n";
  for (const auto& [cluster, why] : rep.result.unsimulated) {
    out += fmt::format("{}: none simulated: {}\n", cluster, why);
  }
  return out + "\n";
}

// Where the answer's stated band reaches past an SLO at the rate: by how much, and the
// first-ranked candidate tried that holds the SLOs across its own band, or the SLO to ask for
// one that would.
std::string BandNote(const api::RecommendReport& rep) {
  const SloReach& best = rep.result.best->reach;
  if (rep.request.rate_per_s <= 0 || best.holds) return "";
  const Slo& slo = rep.request.plan.slo;
  const std::string pct = slo.PercentileName();
  const LatencySummary& ttft = rep.result.best->point->ttft;
  const LatencySummary& tpot = rep.result.best->point->tpot;
  std::string past, ask;
  for (const auto& [name, flag, reach_s, at_slo_s, limit_s] :
       {std::tuple{"TTFT", "--max-ttft-ms", best.ttft_s, ttft.at_slo_s, slo.max_ttft_s},
        std::tuple{"TPOT", "--max-tpot-ms", best.tpot_s, tpot.at_slo_s, slo.max_tpot_s}}) {
    if (reach_s <= limit_s) continue;
    past += fmt::format("{}{} {} may reach {} against {}", past.empty() ? "" : "; ", pct, name,
                        FormatSeconds(reach_s), FormatSeconds(limit_s));
    // The limit shrunk by this band's width, rounded down to 0.1 ms so the band stays within it.
    ask += fmt::format(" {} {:g}", flag, std::floor(1e4 * limit_s * at_slo_s / reach_s) / 10);
  }
  std::string out = fmt::format(
      "   within its stated band (simulate's, around the mean, applied to the {}) it may miss: "
      "{}\n",
      pct, past);
  if (!rep.holds_across_bands) {
    return out + fmt::format(
                     "   no deployment tried holds the SLOs across its band; ask for about{} "
                     "for one that does\n",
                     ask);
  }
  const RecommendCandidate& c = rep.result.tried[*rep.holds_across_bands];
  const SloReach& reach = c.reach;
  return out + fmt::format(
                   "   {} x {} ({}) as {} holds them across its band: {} TTFT up to {}, TPOT up "
                   "to {}; ${:.3f} per million output tokens\n",
                   c.deployment.gpus(), c.deployment.decode().cluster.gpu.name, c.cluster,
                   c.deployment.ToString(), pct, FormatSeconds(reach.ttft_s),
                   FormatSeconds(reach.tpot_s), c.point->usd_per_mtok_output);
}

// What the answer is: the fewest GPUs (or the cheapest deployment) for the rate, or each
// cluster's most load.
std::string Question(const api::RecommendReport& rep) {
  const shardwise::RecommendRequest& req = rep.request;
  const bool by_cost = req.objective == RecommendObjective::kCost;
  if (req.rate_per_s <= 0) {
    return std::string("most load each cluster serves") +
           (by_cost ? "; the cheapest per million output tokens answers" : "");
  }
  return fmt::format("{} for {:g} requests/s (Poisson, at the steady state)",
                     by_cost ? "the cheapest per million output tokens" : "fewest GPUs",
                     req.rate_per_s);
}

}  // namespace

std::string RecommendText(const api::RecommendReport& rep) {
  const shardwise::RecommendRequest& req = rep.request;
  const Slo& slo = req.plan.slo;
  std::string where;
  for (const NamedCluster& c : rep.clusters) {
    if (where.find(c.node.gpu.name) == std::string::npos) {  // clusters of one GPU name it once
      where += (where.empty() ? "" : ", ") + c.node.gpu.name;
    }
  }
  std::string out = fmt::format(
      "recommend: {} on {} GPUs, ISL {} / OSL {}{}, SLOs at {}: TTFT <= {} and TPOT <= {}\n{}; "
      "{} in {}\n\n",
      rep.model.name, where, req.plan.workload.prompt_tokens, req.plan.workload.output_tokens,
      LengthSpreadSuffix(req.plan.load.lengths), slo.PercentileName(),
      FormatSeconds(slo.max_ttft_s), FormatSeconds(slo.max_tpot_s), Question(rep),
      Counted(rep.result.simulations, "simulation", "simulations"), FormatSeconds(rep.elapsed_s));
  out += Candidates(rep);
  const RecommendCandidate& b = *rep.result.best;
  out += fmt::format(
      "=> {} x {} ({}) as {} serves {:.2f} requests/s with {} TTFT {} and TPOT {}; ${:.3f} per "
      "million output tokens at that load ({})\n",
      b.deployment.gpus(), b.deployment.decode().cluster.gpu.name, b.cluster,
      b.deployment.ToString(), b.rate_per_s, slo.PercentileName(),
      FormatSeconds(b.point->ttft.at_slo_s), FormatSeconds(b.point->tpot.at_slo_s),
      b.point->usd_per_mtok_output, HourlyPrice(b.deployment));
  return out + BandNote(rep);
}

}  // namespace shardwise::text
