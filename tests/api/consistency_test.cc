// One deployment, one answer: for the deployment plan chooses (aggregated, and its best
// prefill/decode split), plan's operating point, simulate of that deployment and price of it
// at the same load give the same TTFT, TPOT, throughput and $/Mtok, for every engine profile.
// The expected values are plan's own operating point, checked against two other verbs that take
// the deployment as input (the test: they agree within 1%).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "shardwise/shardwise.h"

namespace shardwise::api {
namespace {

constexpr double kRate = 12;  // requests/s: a load the split and the aggregated layout serve

PlanRequest Question(const std::string& engine) {
  PlanRequest r;
  r.model = "llama-3.1-8b";
  r.cluster.name = "dgx-h100";
  r.cluster.gpus = 4;
  r.serving.engine = engine;
  r.isl = 1024;
  r.osl = 128;
  r.rate = kRate;
  r.top = 2;
  return r;
}

void ExpectWithin(double expected, double actual, double tolerance, const std::string& what) {
  ASSERT_TRUE(std::isfinite(expected) && expected > 0) << what << ": " << expected;
  EXPECT_NEAR(actual / expected, 1.0, tolerance) << what << ": " << actual << " vs " << expected;
}

// Simulate and price `deployment` at plan's load; both must agree with `point`.
void ExpectSameAnswer(const PlanRequest& q, const Deployment& deployment,
                      const OperatingPoint& point, const std::string& label) {
  SimulateRequest s;
  s.model = q.model;
  s.cluster = q.cluster;
  s.serving = q.serving;
  s.deployment = SpecOf(deployment);
  s.workload.isl = q.isl;
  s.workload.osl = q.osl;
  s.rate = kRate;
  const StatusOr<ServingReport> sim = Simulate(Catalog::BuiltIn(), s);
  ASSERT_TRUE(sim.ok()) << label << ": " << sim.status().message();
  EXPECT_EQ(sim->deployment.ToString(), deployment.ToString()) << label;
  ExpectWithin(point.ttft.mean_s, sim->run.result.ttft_s.Mean(), 0.01, label + " TTFT");
  ExpectWithin(point.tpot.mean_s, sim->run.result.tpot_s.Mean(), 0.01, label + " TPOT");
  ExpectWithin(point.output_tokens_per_s, sim->run.OutputTokensPerS(), 0.01,
               label + " output tokens/s");

  PriceRequest p;
  p.model = q.model;
  p.cluster = q.cluster;
  p.serving = q.serving;
  p.deployment = SpecOf(deployment);
  p.isl = q.isl;
  p.osl = q.osl;
  p.rate = kRate;
  const StatusOr<PriceReport> price = Price(Catalog::BuiltIn(), p);
  ASSERT_TRUE(price.ok()) << label << ": " << price.status().message();
  ExpectWithin(point.ttft.mean_s, price->point.ttft.mean_s, 0.01, label + " price's TTFT");
  ExpectWithin(point.tpot.mean_s, price->point.tpot.mean_s, 0.01, label + " price's TPOT");
  ExpectWithin(point.usd_per_mtok_output, price->usd_per_mtok_output, 0.01, label + " $/Mtok");
}

class OneAnswer : public ::testing::TestWithParam<const char*> {};

TEST_P(OneAnswer, PlanSimulateAndPriceAgreeOnPlansDeployments) {
  const PlanRequest q = Question(GetParam());
  const StatusOr<PlanReport> plan = Plan(Catalog::BuiltIn(), q);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  const PlanEntry& best = plan->result.ranked.front();
  ASSERT_TRUE(best.at_load.has_value());
  StatusOr<Deployment> aggregated = ChooseDeployment(*plan, "aggregated", std::nullopt);
  ASSERT_TRUE(aggregated.ok()) << aggregated.status().message();
  ExpectSameAnswer(q, *aggregated, *best.at_load, std::string(GetParam()) + " aggregated");

  ASSERT_TRUE(plan->disaggregated.has_value()) << "no split of 4 H100 for " << GetParam();
  ASSERT_TRUE(plan->disaggregated->at_load.has_value());
  ExpectSameAnswer(q, plan->disaggregated->deployment, *plan->disaggregated->at_load,
                   std::string(GetParam()) + " disaggregated");
}

INSTANTIATE_TEST_SUITE_P(Engines, OneAnswer, ::testing::Values("trtllm", "vllm", "sglang"));

}  // namespace
}  // namespace shardwise::api
