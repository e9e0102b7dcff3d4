// The API's verbs called as a library would call them: the reproductions of the decision
// commands' old wrong answers (issue 24), each with an independent expected value, and bad
// input answered by a Status naming the field.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "shardwise/shardwise.h"
#include "shardwise/sim/degenerate.h"

namespace shardwise::api {
namespace {

constexpr double kGB = 1e9;

TEST(SizeApi, DeepSeekR1ServesOnOneH200NodeInItsFp8Checkpoint) {
  // Hand calculation: DeepSeek-R1's FP8 checkpoint is ~671e9 parameters at one byte (plus the
  // bf16 norms and the fp32 block scales, ~690 GB on disk); an H200 holds 141 GB, 0.9 of it
  // usable: ~127 GB. Four GPUs hold ~508 GB (too little), eight ~1,015 GB (enough, with the
  // KV cache of one request at the full 163,840-token context: 61 layers x 576 fp8 bytes x
  // 163,840 = ~5.8 GB). In bf16 the weights alone (~1,340 GB) would need more than eight.
  SizeRequest r;
  r.model = "deepseek-r1";
  r.cluster = "dgx-h200";
  const StatusOr<SizeReport> rep = Size(Catalog::BuiltIn(), r);
  ASSERT_TRUE(rep.ok()) << rep.status().message();
  EXPECT_EQ(rep->result.gpus, 8);
  EXPECT_GT(rep->result.weight_bytes, 650 * kGB);
  EXPECT_LT(rep->result.weight_bytes, 720 * kGB);

  r.dtype = "bf16";
  const StatusOr<SizeReport> bf16 = Size(Catalog::BuiltIn(), r);
  ASSERT_TRUE(bf16.ok()) << bf16.status().message();
  EXPECT_GT(bf16->result.gpus, 8);
}

TEST(SizeApi, GptOss120bFitsOneH100) {
  // Hand calculation: gpt-oss-120b ships its experts in MXFP4 (4.25 bits per weight with the
  // shared scales) and the rest in bf16: ~61-65 GB, under one H100's 0.9 x 80 GB = 72 GB.
  SizeRequest r;
  r.model = "gpt-oss-120b";
  r.cluster = "dgx-h100";
  r.context = 8192;
  r.concurrency = 1;
  const StatusOr<SizeReport> rep = Size(Catalog::BuiltIn(), r);
  ASSERT_TRUE(rep.ok()) << rep.status().message();
  EXPECT_EQ(rep->result.gpus, 1);
  EXPECT_LT(rep->result.weight_bytes, 72 * kGB);
  EXPECT_GT(rep->result.weight_bytes, 58 * kGB);
}

TEST(ExplainApi, LengthsBeyondTheContextNameTheField) {
  // Llama-3.1-70B's max_position_embeddings is 131,072 (its config.json).
  ExplainRequest r;
  r.context = 200'000;
  const StatusOr<Explanation> e = Explain(Catalog::BuiltIn(), r);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(e.status().field(), "context");
  EXPECT_NE(e.status().message().find("context of 131072 tokens"), std::string::npos)
      << e.status().message();
}

TEST(ExplainApi, Fp4KvOnHopperIsRefusedByField) {
  // Hopper has no FP4 tensor cores (the H100 datasheet lists FP8 as its narrowest format).
  ExplainRequest r;
  r.serving.kv_dtype = "fp4";
  const StatusOr<Explanation> e = Explain(Catalog::BuiltIn(), r);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().field(), "kv_dtype") << e.status().message();
}

TEST(SizeApi, Fp4KvOnHopperIsRefusedAsEverywhereElse) {
  SizeRequest r;
  r.kv_dtype = "fp4";
  const StatusOr<SizeReport> rep = Size(Catalog::BuiltIn(), r);
  ASSERT_FALSE(rep.ok());
  EXPECT_EQ(rep.status().field(), "kv_dtype") << rep.status().message();
}

TEST(ExplainApi, PipelinePrefillCrossesEveryStage) {
  // One prompt through pp8 runs all 80 layers, 10 per stage, one stage after another: its TTFT
  // is the eight stages' compute, never one stage's. One GPU works at a time, so the whole
  // model's FLOPs run at one GPU's rate, where tp8 splits each layer over all 8 GPUs: 8x as
  // long at best, less tp8's all-reduces (at most ~2x its compute here) and pp8's sends, so at
  // least 3x. The bug this guards against (one stage's prefill, 66 ms against explain's 387 ms)
  // gives about 1x.
  ExplainRequest pp;
  pp.deployment = DeploymentSpec::Aggregated("pp8");
  pp.batch = 1;
  ExplainRequest tp = pp;
  tp.deployment = DeploymentSpec::Aggregated("tp8");
  const StatusOr<Explanation> a = Explain(Catalog::BuiltIn(), pp);
  const StatusOr<Explanation> b = Explain(Catalog::BuiltIn(), tp);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_GT(a->Step().ttft_s, 0.5 * b->Step().ttft_s);
  EXPECT_GT(a->Step().ttft_s, 3 * b->Step().ttft_s);
}

TEST(SimulateApi, OneClientOnAPipelineSeesExplainsTtft) {
  // The check: simulate at one client equals explain's TTFT within 5% (pp8 on
  // Llama-3.1-70B was 66 ms in simulate against explain's 387 ms).
  ExplainRequest e;
  e.deployment = DeploymentSpec::Aggregated("pp8");
  e.batch = 1;
  e.context = 2048;
  const StatusOr<Explanation> explained = Explain(Catalog::BuiltIn(), e);
  ASSERT_TRUE(explained.ok()) << explained.status().message();

  SimulateRequest s;
  s.model = "llama-3.1-70b";
  s.deployment = DeploymentSpec::Aggregated("pp8");
  s.workload.isl = 2048;
  s.workload.osl = 16;
  s.concurrency = 1;
  s.requests = 40;
  const StatusOr<ServingReport> sim = Simulate(Catalog::BuiltIn(), s);
  ASSERT_TRUE(sim.ok()) << sim.status().message();
  EXPECT_NEAR(sim->run.result.ttft_s.Percentile(50) / explained->estimate.unloaded_ttft_s, 1.0,
              0.05);
}

TEST(SimulateApi, OnlyPositiveInfinityMeansOffline) {
  SimulateRequest s;
  s.model = "llama-3.1-8b";
  s.requests = 50;
  s.rate = -std::numeric_limits<double>::infinity();
  const StatusOr<ServingReport> refused = Simulate(Catalog::BuiltIn(), s);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().field(), "rate");
  s.rate = std::numeric_limits<double>::infinity();
  EXPECT_TRUE(Simulate(Catalog::BuiltIn(), s).ok());
}

// A trace of Llama-3.1-405B FP8 requests, all at t = 0: 9,400-token prompts whose outputs
// alternate between 100 and 1,200 tokens when `spread` (650 on average), else 650 each.
std::string OfflineTrace(const std::string& name, bool spread) {
  const std::string path = ::testing::TempDir() + std::to_string(::getpid()) + "_" + name;
  std::ofstream out(path);
  out << "arrival_s,input_tokens,output_tokens\n";
  for (int i = 0; i < 400; ++i) out << "0,9400," << (spread ? (i % 2 ? 100 : 1200) : 650) << "\n";
  return path;
}

SimulateRequest Offline405b(const std::string& trace) {
  SimulateRequest s;
  s.model = "llama-3.1-405b";
  s.cluster.name = "dgx-h100";
  s.cluster.nodes = 2;
  s.serving.dtype = "fp8";
  s.workload.trace = trace;
  return s;
}

// The aggregated layouts plan ranks for `s`'s model, cluster and serving options at `isl` and
// `osl` tokens, best first; none where it cannot plan.
std::vector<std::string> PlannedLayouts(const SimulateRequest& s, int64_t isl, int64_t osl) {
  PlanRequest p;
  p.model = s.model;
  p.cluster = s.cluster;
  p.serving = s.serving;
  p.isl = isl;
  p.osl = osl;
  p.disaggregated = false;
  const StatusOr<PlanReport> plan = Plan(Catalog::BuiltIn(), p);
  std::vector<std::string> layouts;
  if (plan.ok()) {
    for (const auto& e : plan->result.ranked) layouts.push_back(e.estimate.layout.ToString());
  }
  return layouts;
}

// The layout plan ranks first for `s` at `isl` and `osl` tokens, or "" where it cannot plan.
std::string PlansFirst(const SimulateRequest& s, int64_t isl, int64_t osl) {
  const std::vector<std::string> layouts = PlannedLayouts(s, isl, osl);
  return layouts.empty() ? "" : layouts.front();
}

// The layout simulate picks for `question` must serve at least as many output tokens/s as each
// of plan's leading layouts does when named, and more than plan's first.
void ExpectPickServesMost(const SimulateRequest& question, const std::string& label) {
  const StatusOr<ServingReport> chosen = Simulate(Catalog::BuiltIn(), question);
  ASSERT_TRUE(chosen.ok()) << label << ": " << chosen.status().message();
  // Plan's leading layouts at the questions' mean lengths, 9,400 / 650 tokens.
  const std::vector<std::string> planned = PlannedLayouts(question, 9400, 650);
  ASSERT_EQ(planned.size(), 5u);
  for (const std::string& layout : planned) {
    SimulateRequest named = question;
    named.deployment = DeploymentSpec::Aggregated(layout);
    const StatusOr<ServingReport> run = Simulate(Catalog::BuiltIn(), named);
    ASSERT_TRUE(run.ok()) << label << " " << layout << ": " << run.status().message();
    EXPECT_LE(run->run.OutputTokensPerS(), chosen->run.OutputTokensPerS())
        << label << ": " << layout << " serves more than the chosen "
        << chosen->deployment.ToString();
    // The case the comparison exists for: plan's first is not the best here.
    if (layout == planned.front()) {
      EXPECT_LT(run->run.OutputTokensPerS(), chosen->run.OutputTokensPerS()) << label;
    }
  }
}

TEST(SimulateApi, SpreadLengthsKeepThePlannedLayoutThatServesThemBest) {
  // Plan ranks layouts at fixed lengths, where pipelines lead for this model on 16 GPUs; with
  // outputs of uneven length a pipeline's virtual engines stall behind each other.
  const std::string spread = OfflineTrace("spread.csv", true);
  ExpectPickServesMost(Offline405b(spread), "offline trace");
  std::remove(spread.c_str());

  // Arrivals faster than any of them serves (1.5 requests/s): the most served is kept (plan's
  // first, tp4pp4, had been kept as "keeping up" while serving 0.4 of them).
  const std::string open = ::testing::TempDir() + std::to_string(::getpid()) + "_open.csv";
  {
    std::ofstream out(open);
    out << "arrival_s,input_tokens,output_tokens\n";
    for (int i = 0; i < 400; ++i) out << i / 1.5 << ",9400," << (i % 2 ? 100 : 1200) << "\n";
  }
  ExpectPickServesMost(Offline405b(open), "open-loop trace");
  std::remove(open.c_str());

  // A closed loop without SLOs has no load to keep up with: the most served is kept.
  SimulateRequest closed = Offline405b("");
  closed.concurrency = 300;
  closed.workload.isl = 9400;
  closed.workload.osl = 650;
  closed.workload.lengths.osl_dist = "lognormal";
  ExpectPickServesMost(closed, "closed loop");
}

TEST(SimulateApi, AnOpenLoopKeepsPlansFirstWhereItKeepsUp) {
  // Llama-2-70B FP8 on 8 MI325X (vLLM), 250 requests at 61.5/s, outputs of 50 or 536 tokens:
  // plan's first, dp8, keeps up (it serves more requests/s than are offered), though the drain
  // of its last requests keeps its window's output tokens/s (3,727 when written) far under the
  // 18,020 offered; dp4tp2 falls behind yet ends its window sooner and so shows more (4,147),
  // beyond the margin within which plan's first would stay anyway. The first that keeps up is
  // kept, not the most tokens/s.
  const std::string path = ::testing::TempDir() + std::to_string(::getpid()) + "_keeps_up.csv";
  {
    std::ofstream out(path);
    out << "arrival_s,input_tokens,output_tokens\n";
    for (int i = 0; i < 250; ++i) out << i / 61.5 << ",222," << (i % 2 ? 50 : 536) << "\n";
  }
  SimulateRequest s;
  s.model = "llama-2-70b";
  s.cluster.name = "mi325x-8";
  s.serving.engine = "vllm";
  s.serving.dtype = "fp8";
  s.workload.trace = path;
  SimulateRequest named = s;
  named.deployment = DeploymentSpec::Aggregated("dp4tp2");
  const StatusOr<ServingReport> behind = Simulate(Catalog::BuiltIn(), named);
  ASSERT_TRUE(behind.ok()) << behind.status().message();
  const StatusOr<ServingReport> kept = Simulate(Catalog::BuiltIn(), s);
  ASSERT_TRUE(kept.ok()) << kept.status().message();
  // The premise: the layout that falls behind shows more tokens/s than the one kept, by more
  // than the margin that would keep plan's first regardless.
  EXPECT_TRUE(behind->run.overloaded);
  EXPECT_GT(behind->run.OutputTokensPerS() * kServedShareOfOffered, kept->run.OutputTokensPerS());
  // At the trace's mean lengths, which plan ranks at.
  EXPECT_EQ(kept->deployment.prefill().layout.ToString(), PlansFirst(s, 222, 293));
  EXPECT_FALSE(kept->run.overloaded);
  std::remove(path.c_str());
}

TEST(SimulateApi, OneLengthForAllKeepsPlansFirst) {
  // Llama-3.1-8B offline on 32 H100, 1,000 requests of one length: dp16tp2 serves more than
  // plan's first, dp32, yet simulate keeps dp32, as plan answers for these lengths; so does a
  // lognormal spread of CV 0.01, the spread that only puts a closed loop's clients out of phase
  // (kOutOfPhaseOutputCv).
  SimulateRequest s;
  s.model = "llama-3.1-8b";
  s.cluster.nodes = 4;
  s.rate = std::numeric_limits<double>::infinity();
  s.requests = 1000;
  SimulateRequest named = s;
  named.deployment = DeploymentSpec::Aggregated("dp16tp2");
  const StatusOr<ServingReport> wider = Simulate(Catalog::BuiltIn(), named);
  ASSERT_TRUE(wider.ok()) << wider.status().message();
  s.workload.lengths.osl_dist = "lognormal";
  s.workload.lengths.length_cv = kOutOfPhaseOutputCv;
  const StatusOr<ServingReport> kept = Simulate(Catalog::BuiltIn(), s);
  ASSERT_TRUE(kept.ok()) << kept.status().message();
  EXPECT_EQ(kept->deployment.prefill().layout.ToString(),
            PlansFirst(s, s.workload.isl, s.workload.osl));
  EXPECT_GT(wider->run.OutputTokensPerS(), kept->run.OutputTokensPerS());
}

bool Notes(const ServingReport& rep, const std::string& text) {
  for (const std::string& note : rep.notes) {
    if (note.find(text) != std::string::npos) return true;
  }
  return false;
}

TEST(SimulateApi, APipelineStalledByUnevenIterationsIsNamed) {
  // Every request waits from t = 0, so the stages of a pipeline whose iterations are alike stay
  // busy; with outputs of uneven length its virtual engines wait on each other.
  const std::string spread = OfflineTrace("stall_spread.csv", true);
  const std::string fixed = OfflineTrace("stall_fixed.csv", false);
  for (const auto& [trace, layout, stalled] :
       {std::tuple{spread, "tp4pp4", true}, std::tuple{fixed, "tp4pp4", false},
        std::tuple{spread, "dp2tp8", false}}) {
    SimulateRequest s = Offline405b(trace);
    s.deployment = DeploymentSpec::Aggregated(layout);
    const StatusOr<ServingReport> rep = Simulate(Catalog::BuiltIn(), s);
    ASSERT_TRUE(rep.ok()) << rep.status().message();
    EXPECT_EQ(Notes(*rep, "stalled pipeline: its 4 stages"), stalled) << layout << " " << trace;
    EXPECT_EQ(rep->run.result.utilization < kStalledPipelineBusy, stalled) << layout;
  }
  std::remove(spread.c_str());
  std::remove(fixed.c_str());
}

TEST(RecommendApi, AnSloNoDeploymentMeetsSaysWhichBinds) {
  RecommendRequest r;
  r.model = "llama-3.1-8b";
  r.rate = 5;
  r.slo.max_ttft_ms = 1;  // below one prompt's prefill on any GPU
  r.slo.max_tpot_ms = 50;
  r.max_gpus = 8;
  const StatusOr<RecommendReport> rep = Recommend(Catalog::BuiltIn(), r);
  ASSERT_FALSE(rep.ok());
  EXPECT_NE(rep.status().message().find("TTFT"), std::string::npos) << rep.status().message();
}

TEST(LaunchApi, WritesTheSettingsTheDeploymentServesWith) {
  ExplainRequest r;
  r.serving.engine = "trtllm";
  const StatusOr<Explanation> e = Explain(Catalog::BuiltIn(), r);
  ASSERT_TRUE(e.ok()) << e.status().message();
  Workload lengths;
  lengths.prompt_tokens = 2048;
  lengths.output_tokens = 256;
  const StatusOr<LaunchReport> launch =
      Launch("trtllm", "llama-3.1-70b", e->model, e->deployment, lengths);
  ASSERT_TRUE(launch.ok()) << launch.status().message();
  const Pool& pool = e->deployment.decode();
  EXPECT_EQ(launch->inputs.pool.max_batched_tokens, pool.perf.max_batched_tokens);
  EXPECT_EQ(launch->inputs.pool.max_num_seqs, pool.max_batch * pool.layout.AttentionDp());
  // TensorRT-LLM's profile schedules whole prompts (no chunked prefill): so does its launch.
  EXPECT_FALSE(launch->inputs.pool.chunked_prefill);
  bool yaml = false;
  for (const emit::LaunchFile& f : launch->config.files) {
    if (f.name.ends_with(".yaml")) {
      yaml = true;
      EXPECT_NE(f.text.find("enable_chunked_prefill: false"), std::string::npos) << f.text;
    }
  }
  EXPECT_TRUE(yaml);
  EXPECT_TRUE(launch->notes.empty());
  const StatusOr<LaunchReport> vllm =
      Launch("vllm", "llama-3.1-70b", e->model, e->deployment, lengths);
  ASSERT_TRUE(vllm.ok());
  EXPECT_EQ(vllm->notes.size(), 1u);  // modelled as TensorRT-LLM, launched as vLLM
}

}  // namespace
}  // namespace shardwise::api
