// Attention-DP batch semantics in the serving simulator: the engine's batch cap and chunked-
// prefill budget hold per DP attention rank, so `explain` and `simulate` agree at steady state
// whether a node runs TP attention or attention DP with EP.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "shardwise/model/catalog.h"
#include "shardwise/sim/serving.h"
#include "shardwise/sim/simulator.h"

namespace shardwise {
namespace {

// Output tokens per second from the closed-loop simulation of `clients`, as `simulate
// --concurrency` runs it, and from `explain --batch clients` (the step model's offline steady
// state: each request's prefill plus OSL decode steps of the whole batch).
struct Pair {
  double simulated = 0;
  double explained = 0;
};

Pair SimulateAndExplain(const std::string& layout_text, int64_t clients, int64_t max_batch,
                        const std::string& model = "qwen3-30b-a3b") {
  const ModelSpec m = LoadModel(model).value();
  const ClusterSpec c = LoadCluster("dgx-h100").value();
  const Layout l = ParseLayout(layout_text).value();
  PerfOptions perf;
  perf.weight_dtype = perf.kv_dtype = Dtype::kFp8;
  const StepModel step = StepModel::Create(m, c, l, perf).value();
  Workload w;
  w.batch = clients;
  w.prompt_tokens = 1024;
  w.output_tokens = 256;
  const StepEstimate e = step.Estimate(w);
  EXPECT_TRUE(e.memory.Fits()) << layout_text;
  Pool pool = EnginePool(PoolRole::kAggregated, l, 1, c, perf, max_batch);
  pool.admission = MaxUtilizationAdmission{};
  const Deployment d = Deployment::Aggregated(m, pool).value();
  ServingSetup setup = PrepareServing(m, d, w, 1024 + 256).value();
  setup.config.concurrency = clients;
  RequestSource source({std::numeric_limits<double>::infinity(), 1.0},
                       {LengthDistribution::kFixed, 1024, 0}, {LengthDistribution::kFixed, 256, 0},
                       clients * 10, 1);
  const SimResult r = Simulate(m, source, setup.config).value();
  return {r.OutputTokensPerS(), e.output_tokens_per_s};
}

TEST(AttentionDp, BatchCapAndPrefillBudgetHoldPerAttentionRank) {
  // 512 clients with the engine's cap of 256 sequences: TP8 attention is one rank and runs 256
  // at once; dp8ep8 has 8 attention ranks (2,048 at once) and tp2dp4ep8 has 4 (1,024), so both
  // hold all 512, as `explain --batch 512` assumes.
  const Pair dp = SimulateAndExplain("dp8ep8", 512, 256);
  const Pair mixed = SimulateAndExplain("tp2dp4ep8", 512, 256);
  EXPECT_NEAR(dp.simulated / dp.explained, 1.0, 0.15);
  EXPECT_NEAR(mixed.simulated / mixed.explained, 1.0, 0.15);
  // TP8 at its own cap agrees with explain at that batch.
  const Pair tp = SimulateAndExplain("tp8", 256, 256);
  EXPECT_NEAR(tp.simulated / tp.explained, 1.0, 0.15);
}

TEST(AttentionDp, MixtralAndQwenLayoutsRankAlikeInExplainAndSimulate) {
  // On one DGX H100 at 512 clients (engine cap 256 per attention rank), the three ways to lay
  // out a MoE node rank in the same order by throughput whether the step model's steady state
  // (explain) or the simulator (simulate, and plan, which ranks by the simulator) judges them.
  for (const std::string model : {"mixtral-8x7b", "qwen3-30b-a3b"}) {
    std::vector<std::pair<double, std::string>> explained, simulated;
    for (const std::string layout : {"tp8", "dp8ep8", "tp2dp4ep8"}) {
      const Pair p = SimulateAndExplain(layout, 512, 256, model);
      explained.emplace_back(p.explained, layout);
      simulated.emplace_back(p.simulated, layout);
    }
    std::sort(explained.begin(), explained.end());
    std::sort(simulated.begin(), simulated.end());
    for (size_t i = 0; i < explained.size(); ++i) {
      EXPECT_EQ(explained[i].second, simulated[i].second) << model << " rank " << i;
    }
  }
}

}  // namespace
}  // namespace shardwise
