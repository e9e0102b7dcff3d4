// Replay: a saved question under the fields a caller set itself, field by field.
#include "shardwise/api/replay.h"

#include <gtest/gtest.h>

#include <cmath>

namespace shardwise::api {
namespace {

SavedDeployment Saved() {
  SavedDeployment s;
  s.model = "llama-3.1-8b";
  s.deployment = DeploymentSpec::Aggregated("dp4tp2");
  s.isl = 2048;
  s.osl = 512;
  s.concurrency = 64;
  s.slo.max_ttft_ms = 3000;
  s.slo.percentile = "p90";
  s.lengths.osl_dist = "lognormal";
  s.seed = 7;
  return s;
}

TEST(Replay, SimulateKeepsOnlyTheFieldsTheCallerSet) {
  SimulateRequest r;
  r.workload.isl = 1024;  // the caller's
  r.slo.max_tpot_ms = 40;
  GivenFields given;
  given.isl = given.max_tpot = true;
  Replay(Saved(), given, r);
  EXPECT_EQ(r.model, "llama-3.1-8b");
  EXPECT_EQ(r.deployment.layout, "dp4tp2");
  EXPECT_EQ(r.workload.isl, 1024);
  EXPECT_EQ(r.workload.osl, 512);
  EXPECT_EQ(r.concurrency, 64);
  EXPECT_EQ(r.workload.lengths.osl_dist, "lognormal");
  EXPECT_EQ(r.seed, 7u);
  EXPECT_EQ(r.slo.max_ttft_ms, 3000);
  EXPECT_EQ(r.slo.max_tpot_ms, 40);
  EXPECT_EQ(r.slo.percentile, "p90");
}

TEST(Replay, AnOfflineSimulateStaysOffline) {
  SavedDeployment s = Saved();
  s.concurrency.reset();
  s.offline = true;
  SimulateRequest r;
  Replay(s, GivenFields{}, r);
  ASSERT_TRUE(r.rate.has_value());
  EXPECT_TRUE(std::isinf(*r.rate));
}

TEST(Replay, PriceWithItsOwnSlosPricesThemNotTheSavedLoad) {
  PriceRequest r;
  GivenFields given;
  given.max_ttft = true;
  r.slo.max_ttft_ms = 1000;
  Replay(Saved(), given, r);
  EXPECT_FALSE(r.concurrency.has_value());
  EXPECT_EQ(r.slo.max_ttft_ms, 1000);
  PriceRequest plain;
  Replay(Saved(), GivenFields{}, plain);
  EXPECT_EQ(plain.concurrency, 64);
}

TEST(Replay, PriceDrawsTheSavedLengthsAtAnyLoad) {
  // The saved run's lognormal outputs are its workload's: priced at its own SLOs (not the saved
  // load) they still spread; a spread the caller gives wins.
  PriceRequest r;
  GivenFields given;
  given.max_ttft = true;
  Replay(Saved(), given, r);
  EXPECT_EQ(r.generator.lengths.osl_dist, "lognormal");
  EXPECT_EQ(r.generator.lengths.isl_dist, "fixed");
  EXPECT_EQ(r.generator.router, "");  // the arrivals are the saved load's, not replayed here
  PriceRequest mine;
  mine.generator.lengths.osl_dist = "uniform";
  mine.generator.lengths.length_cv = 0.2;
  given.osl_dist = given.length_cv = true;
  Replay(Saved(), given, mine);
  EXPECT_EQ(mine.generator.lengths.osl_dist, "uniform");
  EXPECT_EQ(mine.generator.lengths.length_cv, 0.2);
}

TEST(Replay, ASavedCvStaysWhereALengthStillSpreads) {
  // Replayed at fixed lengths, a saved lognormal's CV is not kept (it would spread nothing).
  SavedDeployment s = Saved();
  s.lengths.length_cv = 0.8;
  SimulateRequest r;
  r.workload.lengths.osl_dist = "fixed";
  GivenFields given;
  given.osl_dist = true;
  Replay(s, given, r);
  EXPECT_EQ(r.workload.lengths.osl_dist, "fixed");
  EXPECT_FALSE(r.workload.lengths.length_cv.has_value());
  SimulateRequest kept;
  Replay(s, GivenFields{}, kept);
  EXPECT_EQ(kept.workload.lengths.length_cv, 0.8);
  PriceRequest p;
  p.generator.lengths.osl_dist = "fixed";
  Replay(s, given, p);
  EXPECT_FALSE(p.generator.lengths.length_cv.has_value());
  // Prompts that still spread keep the saved CV when only the outputs are fixed here.
  s.lengths.isl_dist = "lognormal";
  SimulateRequest prompts;
  prompts.workload.lengths.osl_dist = "fixed";
  Replay(s, given, prompts);
  EXPECT_EQ(prompts.workload.lengths.isl_dist, "lognormal");
  EXPECT_EQ(prompts.workload.lengths.length_cv, 0.8);
}

TEST(Replay, ExplainHoldsTheSavedClientsPerReplica) {
  // 64 clients over dp4tp2's 4 replicas: 16 each (hand division).
  ExplainRequest r;
  ASSERT_TRUE(Replay(Saved(), GivenFields{}, r).ok());
  EXPECT_EQ(r.batch, 16);
  EXPECT_EQ(r.context, 2048);
  ExplainRequest mine;
  mine.batch = 3;
  GivenFields given;
  given.batch = true;
  ASSERT_TRUE(Replay(Saved(), given, mine).ok());
  EXPECT_EQ(mine.batch, 3);
}

}  // namespace
}  // namespace shardwise::api
