// Disaggregated prefill/decode in the serving simulator, against hand calculations on the step
// tables: a request prefills on a prefill replica, its KV moves to a decode replica after the
// transfer time, and its first token leaves when the decode replica admits it.
#include <gtest/gtest.h>

#include <limits>
#include <memory>

#include "shardwise/model/catalog.h"
#include "shardwise/sim/simulator.h"

namespace shardwise {
namespace {

// Rate infinity: every request arrives at t = 0.
constexpr double kAllAtOnce = std::numeric_limits<double>::infinity();

struct Pools {
  ModelSpec model = LoadModel("llama-3.1-8b").value();
  ClusterSpec cluster = WithGpus(LoadCluster("dgx-h100").value(), 2).value();
  std::unique_ptr<StepModel> step;
  std::unique_ptr<StepTable> table;
  SimConfig config;

  // One prefill and one decode replica of tp1, both with `decode_kv_tokens` of KV room on the
  // decode side; the transfer takes 1 ms + 1 us per prompt token.
  explicit Pools(double decode_kv_tokens) {
    const Layout tp1 = ParseLayout("tp1").value();
    step = std::make_unique<StepModel>(StepModel::Create(model, cluster, tp1, {}).value());
    table = std::make_unique<StepTable>(StepTable::Build(*step, 8, 2048, 8192).value());
    SimPool prefill;
    prefill.table = table.get();
    prefill.role = PoolRole::kPrefill;
    prefill.batch.max_batch = 8;
    prefill.batch.max_batched_tokens = 512;
    prefill.kv_capacity_tokens = 100'000;
    SimPool decode = prefill;
    decode.role = PoolRole::kDecode;
    decode.kv_capacity_tokens = decode_kv_tokens;
    config.pools = {prefill, decode};
    config.transfer_latency_s = 1e-3;
    config.transfer_s_per_token = 1e-6;
  }

  SimResult Run(int64_t requests, int64_t isl, int64_t osl) {
    RequestSource source({kAllAtOnce, 1.0},
                         {LengthDistribution::kFixed, static_cast<double>(isl), 0},
                         {LengthDistribution::kFixed, static_cast<double>(osl), 0}, requests, 1);
    auto r = Simulate(model, source, config);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return std::move(r).value();
  }
};

TEST(Disaggregated, OneRequestPrefillsTransfersAndDecodesByHand) {
  // 512 prompt + 4 output tokens. Prefill: one iteration of 512 tokens attending to 256.5 keys
  // each; the KV transfer 1 ms + 512 us; then the decode replica admits it (its first token)
  // and runs 3 decode steps at contexts 513, 514, 515.
  Pools p(100'000);
  const SimResult r = p.Run(1, 512, 4);
  ASSERT_EQ(r.requests, 1);
  const double prefill_s = p.table->PrefillSeconds(512, 256.5);
  const double transfer_s = 1e-3 + 512e-6;
  const double decode_s = p.table->DecodeSeconds(1, 513) + p.table->DecodeSeconds(1, 514) +
                          p.table->DecodeSeconds(1, 515);
  EXPECT_NEAR(r.ttft_s.Mean() / (prefill_s + transfer_s), 1.0, 0.011);  // 1% histogram buckets
  EXPECT_NEAR(r.makespan_s, prefill_s + transfer_s + decode_s, 1e-9);
  EXPECT_NEAR(r.tpot_s.Mean() / (decode_s / 3), 1.0, 0.011);
  EXPECT_NEAR(r.kv_transfer_s_mean, transfer_s, 1e-12);
  EXPECT_EQ(r.steps, 4);  // one prefill iteration, three decode iterations
}

TEST(Disaggregated, PromptsQueueOnThePrefillReplica) {
  // Two 512-token prompts at t = 0 with a 512-token iteration budget: the second prefills after
  // the first, so the TTFTs are P + X and 2P + X (X the transfer); mean 1.5 P + X.
  Pools p(100'000);
  const SimResult r = p.Run(2, 512, 2);
  ASSERT_EQ(r.requests, 2);
  const double prefill_s = p.table->PrefillSeconds(512, 256.5);
  const double transfer_s = 1e-3 + 512e-6;
  EXPECT_NEAR(r.ttft_s.Mean() / (1.5 * prefill_s + transfer_s), 1.0, 0.011);
  EXPECT_DOUBLE_EQ(r.output_tokens, 4);
}

TEST(Disaggregated, AFullDecodeReplicaHoldsTheNextRequestBack) {
  // 64-token prompts, 3 output tokens, a 64-token iteration budget so the prompts prefill one
  // after the other (P each). The decode replica holds one request (no-evict: 64 + 3 + one
  // 16-token block = 83 of 100 tokens). The second request's KV arrives at 2P + X, while the
  // first decodes its 2 steps (D in all, P << D); it is admitted (its first token) when the
  // first finishes, at P + X + D, and decodes its own 2 steps.
  Pools p(100);
  p.config.pools[0].batch.max_batched_tokens = 64;
  const SimResult r = p.Run(2, 64, 3);
  ASSERT_EQ(r.requests, 2);
  const double prefill_s = p.table->PrefillSeconds(64, 32.5);
  const double transfer_s = 1e-3 + 64e-6;
  const double decode_s = p.table->DecodeSeconds(1, 65) + p.table->DecodeSeconds(1, 66);
  ASSERT_LT(2 * prefill_s + transfer_s, prefill_s + transfer_s + decode_s);
  const double first_ttft = prefill_s + transfer_s;
  const double second_ttft = first_ttft + decode_s;
  EXPECT_NEAR(r.ttft_s.Mean() / ((first_ttft + second_ttft) / 2), 1.0, 0.011);
  EXPECT_NEAR(r.makespan_s, second_ttft + decode_s, 1e-9);
}

}  // namespace
}  // namespace shardwise
