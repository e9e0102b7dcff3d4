// The planner's answers on the cases the issue names.
#include "shardwise/plan/planner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "shardwise/model/catalog.h"
#include "shardwise/perf/engine.h"
#include "shardwise/plan/disagg_planner.h"
#include "shardwise/plan/load.h"

namespace shardwise {
namespace {

ClusterSpec Nodes(const std::string& name, int64_t nodes) {
  return WithNodes(LoadCluster(name).value(), nodes).value();
}

TEST(Enumerate, DenseLayoutsOfSixteenGpus) {
  EngineProfile serves_cp;
  serves_cp.context_parallel = true;
  const auto layouts = EnumerateLayouts(LoadModel("llama-3.1-70b").value(), 16, 1024, serves_cp);
  auto has = [&](const std::string& text) {
    return std::any_of(layouts.begin(), layouts.end(),
                       [&](const Layout& l) { return l.ToString() == text; });
  };
  EXPECT_TRUE(has("tp8pp2"));
  EXPECT_TRUE(has("dp2tp8"));
  EXPECT_TRUE(has("tp16"));
  EXPECT_TRUE(has("dp16"));
  for (const Layout& l : layouts) EXPECT_EQ(l.gpus(), 16) << l.ToString();
  EXPECT_FALSE(has("tp8cp2"));  // CP only for long prompts, even on an engine that serves it
}

TEST(Enumerate, ContextParallelOnlyForLongPromptsOnAnEngineThatServesIt) {
  const ModelSpec model = LoadModel("llama-3.1-70b").value();
  auto with_cp = [&](int64_t prompt_tokens, bool engine_serves_cp) {
    EngineProfile engine;
    engine.context_parallel = engine_serves_cp;
    int64_t n = 0;
    for (const Layout& l : EnumerateLayouts(model, 8, prompt_tokens, engine)) {
      n += l.cp > 1 ? 1 : 0;
    }
    return n;
  };
  EXPECT_GT(with_cp(8192, true), 0);   // tp4cp2, cp8 ...
  EXPECT_EQ(with_cp(8192, false), 0);  // the engine cannot launch them
  EXPECT_EQ(with_cp(4096, true), 0);   // short prompts: no CP tried
}

TEST(DisaggPlanner, APrefillWorkerPassesWhatItsApiServersTokenize) {
  // Qwen3-30B-A3B (3B active) prefills 1,024-token prompts on eight B200s faster than one
  // TensorRT-LLM API server tokenizes them, one at a time at 3.6 us a token (NVIDIA's live
  // trtllm-serve measurement, closed-loop-ttft.md): at most 1 / (3.6e-6 x 1,024) = 271.27
  // prompts a second per API server, one per replica of the worker's layout. The split search
  // had ranked such a worker at what its GPUs compute.
  PlanRequest req;
  req.perf.engine = LoadEngine("trtllm-1.0").value();
  req.workload.prompt_tokens = 1024;
  req.workload.output_tokens = 64;
  std::vector<PoolWorker> prefill, decode;
  AddPoolWorkers(LoadModel("qwen3-30b-a3b").value(), Nodes("dgx-b200", 1), req, 8, prefill, decode);
  ASSERT_FALSE(prefill.empty());
  const double per_api_server = 1.0 / (3.6e-6 * 1024);
  bool tokenizer_binds = false;
  for (const PoolWorker& w : prefill) {
    const double per_worker = w.requests_per_s_per_gpu * static_cast<double>(w.layout.gpus());
    const double servers = static_cast<double>(w.layout.Replicas());
    EXPECT_LE(per_worker, servers * per_api_server * (1 + 1e-12)) << w.layout.ToString();
    tokenizer_binds |= std::abs(per_worker - servers * per_api_server) < 1e-6;
  }
  EXPECT_TRUE(tokenizer_binds);
}

TEST(Plan, RanksNoContextParallelLayoutForAnEngineWithoutIt) {
  // Every built-in profile serves without context parallelism (data/engines/*.json), so the
  // 8,192-token prompts that would try cp rank none, and a note says why.
  PlanRequest req;
  req.perf.engine = LoadEngine("trtllm-1.0").value();
  req.workload.prompt_tokens = 8192;
  req.workload.output_tokens = 256;
  const ModelSpec model = LoadModel("llama-3.1-70b").value();
  auto r = Plan(model, Nodes("dgx-h100", 1), req);
  ASSERT_TRUE(r.ok()) << r.status().message();
  for (const PlanEntry& e : r->ranked)
    EXPECT_EQ(e.estimate.layout.cp, 1) << e.estimate.layout.ToString();
  EXPECT_NE(UnsearchedContextParallelNote(req, 8).find("trtllm-1.0 serves without context "
                                                       "parallelism"),
            std::string::npos);
  EXPECT_EQ(UnsearchedContextParallelNote(req, 1), "");  // one GPU holds no cp layout anyway
  // A profile that serves it is searched over cp too, and needs no note.
  req.perf.engine.context_parallel = true;
  EXPECT_EQ(UnsearchedContextParallelNote(req, 8), "");
  req.workload.prompt_tokens = 1024;  // too short to try cp, whatever the engine
  req.perf.engine.context_parallel = false;
  EXPECT_EQ(UnsearchedContextParallelNote(req, 8), "");
}

TEST(Plan, Dense70bLatencyKeepsTpInsideANode) {
  // the Parallelism guide/002: for latency, TP inside the NVLink node, PP or DP across nodes
  // (TP8PP2).
  PlanRequest req;
  req.objective = Objective::kLatency;
  auto r = Plan(LoadModel("llama-3.1-70b").value(), Nodes("dgx-h100", 2), req);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const Layout best = r->ranked[0].estimate.layout;
  EXPECT_EQ(best.tp, 8) << best.ToString();
  EXPECT_TRUE(best.pp == 2 || best.dp == 2) << best.ToString();
}

TEST(Plan, MoeThroughputPrefersEpAcrossNodesOverTpAcrossNodes) {
  // the Parallelism guide: MoE across two nodes -> EP16 beats spreading TP over the network.
  const ModelSpec m = LoadModel("qwen3-235b-a22b").value();
  const ClusterSpec c = Nodes("dgx-h100", 2);
  auto best_of = [&](const std::string& layout) {
    PlanRequest req;
    req.perf.weight_dtype = req.perf.kv_dtype = Dtype::kFp8;
    req.only_layout = ParseLayout(layout).value();
    auto r = Plan(m, c, req);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r->ranked[0].estimate.output_tokens_per_s_per_gpu;
  };
  EXPECT_GT(best_of("ep16"), best_of("tp16"));
  PlanRequest all;
  all.perf.weight_dtype = all.perf.kv_dtype = Dtype::kFp8;
  auto r = Plan(m, c, all);
  ASSERT_TRUE(r.ok());
  EXPECT_GT(r->ranked[0].estimate.layout.ep, 1);  // the winner uses expert parallelism
}

TEST(Plan, WholePromptsCapTheBatchAtTheTokenBudget) {
  // TensorRT-LLM without chunked prefill, a 1,628-token budget for 128-token prompts (128 +
  // the 1,500 headroom): beyond 1,628 - 128 = 1,500 decodes no prompt fits beside them, so no
  // larger batch is offered, and the reason is named. One B200 holds far more in KV (fp8).
  PlanRequest req;
  req.workload.prompt_tokens = 128;
  req.workload.output_tokens = 128;
  req.perf.engine = LoadEngine("trtllm").value();
  req.perf.max_batched_tokens = EngineTokenBudget(req.perf.engine, 128, 128);
  req.perf.kv_dtype = Dtype::kFp8;
  ASSERT_EQ(req.perf.max_batched_tokens, 1628);
  auto r = Plan(LoadModel("llama-3.1-8b").value(),
                WithGpus(LoadCluster("dgx-b200").value(), 1).value(), req);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_FALSE(r->ranked.empty());
  EXPECT_EQ(r->ranked[0].estimate.workload.batch, 1500);
  EXPECT_NE(r->ranked[0].limited_by.find("token budget"), std::string::npos)
      << r->ranked[0].limited_by;
}

TEST(Plan, DoesNotFitSaysByHowMuch) {
  auto r = Plan(LoadModel("llama-3.1-70b").value(),
                WithGpus(LoadCluster("dgx-h100").value(), 1).value(), PlanRequest{});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("does not fit"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("short by"), std::string::npos);
}

TEST(Plan, SlosAreRespected) {
  // Judged at p99 of the simulated requests, not at the mean or the unloaded step.
  PlanRequest req;
  req.slo.max_tpot_s = 0.02;
  req.slo.max_ttft_s = 0.5;
  auto r = Plan(LoadModel("llama-3.1-70b").value(), LoadCluster("dgx-h100").value(), req);
  ASSERT_TRUE(r.ok()) << r.status().message();
  for (const PlanEntry& e : r->ranked) {
    EXPECT_LE(e.estimate.tpot_s, 0.02);
    EXPECT_LE(e.estimate.ttft_s, 0.5);
    ASSERT_TRUE(e.at_load.has_value());
    EXPECT_LE(e.at_load->tpot.p99_s, 0.02);
    EXPECT_LE(e.at_load->ttft.p99_s, 0.5);
  }
  req.slo.max_tpot_s = 1e-6;
  EXPECT_NE(Plan(LoadModel("llama-3.1-70b").value(), LoadCluster("dgx-h100").value(), req)
                .status()
                .message()
                .find("meets the SLOs"),
            std::string::npos);
}

TEST(Plan, ParetoFrontIsNonDominated) {
  auto r = Plan(LoadModel("llama-3.1-70b").value(), Nodes("dgx-h100", 2), PlanRequest{});
  ASSERT_TRUE(r.ok());
  ASSERT_GE(r->pareto.size(), 2u);
  for (size_t i = 1; i < r->pareto.size(); ++i) {
    EXPECT_LE(r->pareto[i].estimate.output_tokens_per_s_per_user,
              r->pareto[i - 1].estimate.output_tokens_per_s_per_user);
    EXPECT_GT(r->pareto[i].estimate.output_tokens_per_s_per_gpu,
              r->pareto[i - 1].estimate.output_tokens_per_s_per_gpu);
  }
}

TEST(Plan, EveryRankedEntryExplainsItself) {
  auto r = Plan(LoadModel("mixtral-8x7b").value(), LoadCluster("dgx-h100").value(), PlanRequest{});
  ASSERT_TRUE(r.ok());
  for (const PlanEntry& e : r->ranked) {
    EXPECT_NE(e.why.find(e.estimate.layout.ToString()), std::string::npos);
    EXPECT_NE(e.why.find("bound by"), std::string::npos);
  }
}

TEST(ServedShare, SaysWhatAnOverloadedRunServed) {
  EXPECT_EQ(ServedShare(5.0, 10.0), "5");
  EXPECT_EQ(ServedShare(0.05, 10.0), "under 1% of it");
  // 10.1 of 10 requests/s: the window kept up, so the overload is a queue that did not settle.
  EXPECT_EQ(ServedShare(10.1, 10.0), "10.1, yet its queue still grows through the run");
  // Below the offered rate it served less: no "yet".
  EXPECT_EQ(ServedShare(9.8, 10.0), "9.8");
}

}  // namespace
}  // namespace shardwise
