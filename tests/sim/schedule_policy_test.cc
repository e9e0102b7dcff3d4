// The engines' prefill schedules in the serving simulator, iteration by iteration against the
// step table: SGLang's prefill-first iterations (mixed chunks off) and TensorRT-LLM's whole
// prompts (chunked prefill off), beside the default mixed, chunked schedule, and an overlap
// scheduler's one-iteration lookahead.
#include <gtest/gtest.h>

#include <limits>
#include <memory>

#include "shardwise/model/catalog.h"
#include "shardwise/sim/simulator.h"

namespace shardwise {
namespace {

// Rate infinity: every request arrives at t = 0.
constexpr double kEveryRequestAtZero = std::numeric_limits<double>::infinity();

struct Replica {
  ModelSpec model = LoadModel("llama-3.1-8b").value();
  ClusterSpec cluster = WithGpus(LoadCluster("dgx-h100").value(), 1).value();
  std::unique_ptr<StepModel> step;
  std::unique_ptr<StepTable> table;
  SimConfig config;

  // One tp1 replica with a 512-token iteration budget and room for everything.
  Replica() {
    step = std::make_unique<StepModel>(
        StepModel::Create(model, cluster, ParseLayout("tp1").value(), {}).value());
    table = std::make_unique<StepTable>(StepTable::Build(*step, 8, 2048, 8192).value());
    SimPool& pool = config.pools.emplace_back();
    pool.table = table.get();
    pool.batch.max_batch = 8;
    pool.batch.max_batched_tokens = 512;
    pool.kv_capacity_tokens = 100'000;
  }

  // `requests` prompts of `isl` tokens, all at t = 0, each generating `osl` tokens.
  SimResult Run(int64_t requests, int64_t isl, int64_t osl) {
    RequestSource source({kEveryRequestAtZero, 1.0},
                         {LengthDistribution::kFixed, static_cast<double>(isl), 0},
                         {LengthDistribution::kFixed, static_cast<double>(osl), 0}, requests, 1);
    return Run(source);
  }

  SimResult Run(RequestSource& source) {
    auto r = Simulate(model, source, config);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return std::move(r).value();
  }
};

TEST(PrefillSchedule, PrefillFirstPausesDecodesWhilePromptsWait) {
  // Two 512-token prompts, 3 output tokens each, prefill first:
  //   iteration 1: prefill A (512 tokens attending to 256.5 keys each)  -> A's first token
  //   iteration 2: prefill B alone; A does not decode                    -> B's first token
  //   iterations 3, 4: decode A and B at contexts 513, then 514 (D1 = D(2, 513), D2 = D(2, 514))
  // TTFT mean (P + 2P) / 2; makespan 2P + D1 + D2. Each sequence's inter-token gaps: A's second
  // token comes P + D1 after its first (it stalls through B's prefill), B's D1 after its own;
  // both third tokens D2 later. Mean ITL (P + 2 D1 + 2 D2) / 4, also the mean TPOT (each request
  // has two gaps), and the largest gap is A's P + D1, not an iteration's length.
  Replica rep;
  rep.config.pools[0].batch.schedule = PrefillFirstSchedule{};
  const SimResult r = rep.Run(2, 512, 3);
  ASSERT_EQ(r.requests, 2);
  const double p = rep.table->PrefillSeconds(512, 256.5);
  const double d1 = rep.table->DecodeSeconds(2, 513);
  const double d2 = rep.table->DecodeSeconds(2, 514);
  EXPECT_EQ(r.steps, 4);
  EXPECT_NEAR(r.makespan_s, 2 * p + d1 + d2, 1e-9);
  EXPECT_NEAR(r.ttft_s.Mean() / (1.5 * p), 1.0, 0.011);  // 1% histogram buckets
  EXPECT_NEAR(r.itl_s.Mean() / ((p + 2 * d1 + 2 * d2) / 4), 1.0, 0.011);
  EXPECT_NEAR(r.itl_s.Mean() / r.tpot_s.Mean(), 1.0, 0.011);
  EXPECT_NEAR(r.itl_s.Max() / (p + d1), 1.0, 0.011);
}

TEST(PrefillSchedule, MixedIterationsDecodeBesideTheNextChunk) {
  // The same two prompts, mixed:
  //   iteration 1: prefill A
  //   iteration 2: decode A (context 513) beside B's first 511 tokens (the budget less A's
  //                decode token), attending to 256 keys each
  //   iteration 3: decode A (514) beside B's last token, which attends to 512 keys -> A done
  //   iterations 4, 5: decode B at contexts 513, 514
  Replica rep;
  const SimResult r = rep.Run(2, 512, 3);
  ASSERT_EQ(r.requests, 2);
  const double p = rep.table->PrefillSeconds(512, 256.5);
  const double it2 = rep.table->StepSeconds(1, 513, 511, 256.0);
  const double it3 = rep.table->StepSeconds(1, 514, 1, 512.0);
  EXPECT_EQ(r.steps, 5);
  EXPECT_NEAR(r.makespan_s,
              p + it2 + it3 + rep.table->DecodeSeconds(1, 513) + rep.table->DecodeSeconds(1, 514),
              1e-9);
}

TEST(PrefillSchedule, UnchunkedPromptsWaitForRoomWhole) {
  // Two 300-token prompts, 2 output tokens, a 512-token budget. Chunked, B's first 212 tokens
  // would ride with A; unchunked, B waits:
  //   iteration 1: A whole (300 tokens attending to 150.5 keys)     -> A's first token
  //   iteration 2: A's decode at context 301 beside B whole          -> A done, B's first token
  //   iteration 3: B's decode at context 301
  Replica rep;
  rep.config.pools[0].batch.schedule = WholePromptMixedSchedule{};
  const SimResult r = rep.Run(2, 300, 2);
  ASSERT_EQ(r.requests, 2);
  const double it1 = rep.table->PrefillSeconds(300, 150.5);
  const double it2 = rep.table->StepSeconds(1, 301, 300, 150.5);
  EXPECT_EQ(r.steps, 3);
  EXPECT_NEAR(r.makespan_s, it1 + it2 + rep.table->DecodeSeconds(1, 301), 1e-9);
  EXPECT_NEAR(r.ttft_s.Mean() / ((it1 + it1 + it2) / 2), 1.0, 0.011);
}

TEST(PrefillSchedule, UnchunkedPromptLongerThanTheBudgetRunsAlone) {
  // A 1000-token prompt cannot fit a 512-token budget whole: it runs as its iteration's only
  // prompt instead of waiting forever.
  Replica rep;
  rep.config.pools[0].batch.schedule = WholePromptMixedSchedule{};
  const SimResult r = rep.Run(1, 1000, 1);
  ASSERT_EQ(r.requests, 1);
  EXPECT_EQ(r.steps, 1);
  EXPECT_NEAR(r.makespan_s, rep.table->PrefillSeconds(1000, 500.5), 1e-9);
}

// A (300-token prompt, 4 output tokens) at t = 0; B (100 tokens, 2 output tokens) halfway
// through A's prefill, whole prompts (TensorRT-LLM's schedule).
struct LateArrival {
  Replica rep;
  double t1 = 0;  // A's prefill: iteration 1

  explicit LateArrival(bool plans_ahead) {
    rep.config.pools[0].batch.schedule = WholePromptMixedSchedule{};
    rep.config.pools[0].batch.plans_ahead = plans_ahead;
    t1 = rep.table->PrefillSeconds(300, 150.5);
  }

  SimResult Run(int64_t a_output) {
    RequestSource source({{0.0, 300, a_output}, {t1 / 2, 100, 2}});
    return rep.Run(source);
  }
};

TEST(PrefillSchedule, WithoutLookaheadALateRequestJoinsTheNextIteration) {
  //   iteration 1: A whole                                        -> A's first token at t1
  //   iteration 2: A's decode (context 301) beside B whole          -> B's first token
  //   iteration 3: A (302) and B (101) decode                       -> B done
  //   iteration 4: A (303) decodes                                  -> A done
  LateArrival late(false);
  const SimResult r = late.Run(4);
  ASSERT_EQ(r.requests, 2);
  const Replica& rep = late.rep;
  const double it2 = rep.table->StepSeconds(1, 301, 100, 50.5);
  const double it3 = rep.table->DecodeSeconds(2, (302.0 + 101.0) / 2);
  EXPECT_EQ(r.steps, 4);
  EXPECT_NEAR(r.makespan_s, late.t1 + it2 + it3 + rep.table->DecodeSeconds(1, 303), 1e-9);
  const double ttft_b = late.t1 + it2 - late.t1 / 2;
  EXPECT_NEAR(r.ttft_s.Mean() / ((late.t1 + ttft_b) / 2), 1.0, 0.011);  // 1% buckets
}

TEST(PrefillSchedule, AnOverlapSchedulerTakesALateRequestOneIterationLater) {
  // Iteration 2 was composed as iteration 1 started, before B arrived (TensorRT-LLM's
  // _executor_loop_overlap):
  //   iteration 1: A whole                                        -> A's first token at t1
  //   iteration 2: A's decode (context 301) alone
  //   iteration 3: A's decode (302) beside B whole                  -> B's first token
  //   iteration 4: A (303) and B (101) decode                       -> both done
  LateArrival late(true);
  const SimResult r = late.Run(4);
  ASSERT_EQ(r.requests, 2);
  const Replica& rep = late.rep;
  const double it2 = rep.table->DecodeSeconds(1, 301);
  const double it3 = rep.table->StepSeconds(1, 302, 100, 50.5);
  EXPECT_EQ(r.steps, 4);
  EXPECT_NEAR(r.makespan_s, late.t1 + it2 + it3 + rep.table->DecodeSeconds(2, 202), 1e-9);
  const double ttft_b = late.t1 + it2 + it3 - late.t1 / 2;
  EXPECT_NEAR(r.ttft_s.Mean() / ((late.t1 + ttft_b) / 2), 1.0, 0.011);
}

TEST(PrefillSchedule, AnOverlapSchedulerWithAnEmptyPlanPlansAgainAtOnce) {
  // A generates one token, so the plan made as iteration 1 started holds nothing: the loop
  // plans again when iteration 1 ends and takes B then.
  //   iteration 1: A whole                                        -> A done at t1
  //   iteration 2: B whole                                          -> B's first token
  //   iteration 3: B decodes (context 101)                          -> B done
  LateArrival late(true);
  const SimResult r = late.Run(1);
  ASSERT_EQ(r.requests, 2);
  const Replica& rep = late.rep;
  EXPECT_EQ(r.steps, 3);
  EXPECT_NEAR(r.makespan_s,
              late.t1 + rep.table->PrefillSeconds(100, 50.5) + rep.table->DecodeSeconds(1, 101),
              1e-9);
}

}  // namespace
}  // namespace shardwise
