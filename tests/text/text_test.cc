// The text views of the API's results, called as a library would: what each states is the
// result's own figure (checked against the typed result, not against the text), options are
// named as backticked fields for the caller to show as its flags, and the view follows the
// deployment's kind.
#include "shardwise/text/text.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "shardwise/common/format.h"
#include "shardwise/shardwise.h"

namespace shardwise::text {
namespace {

bool Contains(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

TEST(SimulateText, StatesTheRunsOwnFiguresAndNamesFieldsNotFlags) {
  // 32 clients for 16 batch slots (max_batch 16 on one attention rank): 16 wait, and the text
  // says which option caps them, by its field name.
  api::SimulateRequest r;
  r.concurrency = 32;
  r.serving.max_batch = 16;
  r.deployment.layout = "tp1";
  const StatusOr<api::ServingReport> rep = api::Simulate(api::Catalog::BuiltIn(), r);
  ASSERT_TRUE(rep.ok()) << rep.status().message();
  const std::string text = SimulateText(*rep, r);
  EXPECT_TRUE(Contains(text, "32 clients for at most 16 batch slots")) << text;
  EXPECT_TRUE(Contains(text, "`max_batch`")) << text;
  EXPECT_FALSE(std::regex_search(text, std::regex("--[a-z]")))
      << "flags are the caller's to name:\n"
      << text;
  // The mean TTFT is the run's, as FormatSeconds writes it.
  EXPECT_TRUE(Contains(text, FormatSeconds(rep->run.result.ttft_s.Mean()))) << text;
  EXPECT_TRUE(Contains(text, "closed loop, 32 clients")) << text;
}

TEST(ExplainText, FollowsTheDeploymentsKind) {
  api::ExplainRequest r;
  r.deployment.layout = "tp8";
  const StatusOr<api::Explanation> one = api::Explain(api::Catalog::BuiltIn(), r);
  ASSERT_TRUE(one.ok()) << one.status().message();
  const std::string aggregated = ExplainText(*one);
  EXPECT_TRUE(Contains(aggregated, "layout tp8")) << aggregated;
  EXPECT_TRUE(Contains(aggregated, FormatSeconds(one->Step().tpot_s))) << aggregated;
  // Its cost: 8 GPUs at a $2.50 price cost $20.00 an hour.
  r.cluster.usd_per_gpu_hour = 2.5;
  const StatusOr<api::Explanation> priced = api::Explain(api::Catalog::BuiltIn(), r);
  ASSERT_TRUE(priced.ok()) << priced.status().message();
  EXPECT_TRUE(Contains(ExplainText(*priced), "cost        $20.00 per hour ($2.50 per GPU-hour)"))
      << ExplainText(*priced);

  api::ExplainRequest split;
  split.cluster.nodes = 2;
  split.deployment.layout.clear();
  split.deployment.prefill_layout = "tp4";
  split.deployment.decode_layout = "tp8";
  const StatusOr<api::Explanation> two = api::Explain(api::Catalog::BuiltIn(), split);
  ASSERT_TRUE(two.ok()) << two.status().message();
  const std::string disaggregated = ExplainText(*two);
  EXPECT_TRUE(Contains(disaggregated, two->model.name + " disaggregated:")) << disaggregated;
  EXPECT_TRUE(Contains(disaggregated, "KV transfer")) << disaggregated;
}

TEST(TrainText, RanksAndSaysWhy) {
  api::TrainRunRequest r;
  r.model = "llama-3.1-8b";
  r.global_batch = 64;
  r.seq_len = 2048;
  r.no_sizes = true;
  const StatusOr<api::TrainReport> rep = api::Train(api::Catalog::BuiltIn(), r);
  ASSERT_TRUE(rep.ok()) << rep.status().message();
  const std::string text = TrainText(*rep);
  EXPECT_TRUE(Contains(text, "why: " + rep->plan.ranked.front().why)) << text;
  EXPECT_TRUE(Contains(text, rep->plan.ranked.front().estimate.layout.ToString())) << text;
  EXPECT_FALSE(Contains(text, "time versus cost")) << "no sizes were searched";
}

TEST(PriceText, StatesTheReportsPricesAndNamesFieldsNotFlags) {
  // A demand of 5,000 output tokens/s against an API at $1 per million output tokens: the text
  // gives the report's own price, break-even and sizing, and names the headroom by its field.
  api::PriceRequest r;
  r.model = "llama-3.1-8b";
  r.deployment.layout = "tp1";
  r.cluster.gpus = 1;
  r.demand_tokens_per_s = 5000;
  r.api_usd_per_mtok_output = 1.0;
  const StatusOr<api::PriceReport> rep = api::Price(api::Catalog::BuiltIn(), r);
  ASSERT_TRUE(rep.ok()) << rep.status().message();
  ASSERT_TRUE(rep->sizing.has_value());
  ASSERT_TRUE(rep->break_even.output.has_value());
  const std::string text = PriceText(*rep);
  EXPECT_TRUE(
      Contains(text, fmt::format("=> ${:.4f} per million output tokens", rep->usd_per_mtok_output)))
      << text;
  EXPECT_TRUE(Contains(
      text, fmt::format("{:.1f}% utilisation of the busy hours", 100 * *rep->break_even.output)))
      << text;
  EXPECT_TRUE(Contains(text, fmt::format("{} like this", Counted(rep->sizing->replicas,
                                                                 "deployment", "deployments"))))
      << text;
  EXPECT_TRUE(Contains(text, "`target_utilization`")) << text;
  EXPECT_FALSE(std::regex_search(text, std::regex("--[a-z]"))) << text;
  // Its utilisation is the operating point's, not simulate's GPU busy time (a trial read it so).
  EXPECT_TRUE(Contains(text, "utilization is the share of the operating point's tokens served"))
      << text;
  // A row per utilisation of the curve, with its price.
  ASSERT_FALSE(rep->curve.empty());
  for (const PricePoint& p : rep->curve) {
    EXPECT_TRUE(Contains(text, fmt::format("{:.4f}", p.usd_per_mtok_output))) << text;
  }
}

// recommend's question: `model` at `rate` requests/s within TTFT and TPOT limits (ms).
api::RecommendRequest RecommendQuestion(const std::string& model, double rate, double ttft_ms,
                                        double tpot_ms) {
  api::RecommendRequest r;
  r.model = model;
  r.rate = rate;
  r.slo.max_ttft_ms = ttft_ms;
  r.slo.max_tpot_ms = tpot_ms;
  return r;
}

TEST(RecommendText, ListsEveryCandidateAndPricesTheAnswer) {
  api::RecommendRequest r = RecommendQuestion("llama-3.1-8b", 5, 1000, 50);
  r.clusters.front().usd_per_gpu_hour = 1.25;
  const StatusOr<api::RecommendReport> rep = api::Recommend(api::Catalog::BuiltIn(), r);
  ASSERT_TRUE(rep.ok()) << rep.status().message();
  const std::string text = RecommendText(*rep);
  for (const RecommendCandidate& c : rep->result.tried) {
    EXPECT_TRUE(Contains(text, fmt::format("{:.2f}", c.capacity_requests_per_s))) << text;
  }
  const RecommendCandidate& best = *rep->result.best;
  EXPECT_TRUE(Contains(text, fmt::format("${:.3f} per million output tokens at that load ($1.25 "
                                         "per GPU-hour)",
                                         best.point->usd_per_mtok_output)))
      << text;
}

// Where no candidate tried holds the SLOs across its band, the text says what SLO to ask for
// one that would: the limit shrunk by the answer's band, limit x percentile / its reach.
TEST(RecommendText, WithNoneHoldingAcrossItsBandSaysWhatToAskFor) {
  const StatusOr<api::RecommendReport> found =
      api::Recommend(api::Catalog::BuiltIn(), RecommendQuestion("llama-3.1-70b", 10, 1000, 50));
  ASSERT_TRUE(found.ok()) << found.status().message();
  api::RecommendReport rep = *found;
  ASSERT_FALSE(rep.result.best->reach.holds);
  rep.holds_across_bands.reset();
  const std::string text = RecommendText(rep);
  // The SLO asked for, scaled by this band (reach / percentile), stays within the 50 ms limit,
  // and is within 0.1 ms of it.
  const size_t at = text.find("--max-tpot-ms ");
  ASSERT_NE(at, std::string::npos) << text;
  const double ask_ms = std::stod(text.substr(at + 14));
  const double widening = rep.result.best->reach.tpot_s / rep.result.best->point->tpot.at_slo_s;
  EXPECT_GT(widening, 1.0);
  EXPECT_LE(ask_ms * widening, 50.0) << text;
  EXPECT_GT((ask_ms + 0.1) * widening, 50.0) << text;
  EXPECT_TRUE(Contains(text,
                       "no deployment tried holds the SLOs across its band; ask for about "
                       "--max-tpot-ms "))
      << text;
  EXPECT_FALSE(Contains(text, "--max-ttft-ms")) << text;  // the TTFT band stays within its SLO
}

TEST(MeasuredSpreadText, SaysWhenTheSpreadIsAssumed) {
  EngineProfile engine;
  engine.name = "e";
  engine.closed_loop_measured_on = "h100-sxm";
  EXPECT_FALSE(Contains(MeasuredSpreadText(engine, "h100-sxm", "the bands"), "assumption"));
  EXPECT_TRUE(Contains(MeasuredSpreadText(engine, "b200", "the bands"), "on b200 that spread"));
  // A profile whose spread is itself assumed (borrowed from another profile's closed loops).
  engine.provenance["closed_loop_ttft_ratio_p10"] = Provenance::kAssumed;
  const std::string borrowed = MeasuredSpreadText(engine, "h100-sxm", "the bands");
  EXPECT_TRUE(Contains(borrowed, "for the e profile that spread is assumed, not measured"))
      << borrowed;
}

}  // namespace
}  // namespace shardwise::text
