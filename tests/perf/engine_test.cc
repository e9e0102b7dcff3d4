// Engine profiles: parsing and its errors, and each engine effect on the step time against a
// hand calculation.
#include "shardwise/perf/engine.h"

#include <gtest/gtest.h>

#include "shardwise/catalog/embedded.h"
#include "shardwise/model/catalog.h"
#include "shardwise/perf/comm.h"
#include "shardwise/perf/step.h"

namespace shardwise {
namespace {

TEST(EngineProfile, BuiltinsLoadByBareAndVersionedName) {
  for (const char* name : {"trtllm", "vllm", "sglang", "trtllm-1.0", "trtllm-cpp", "vllm-0.12",
                           "vllm-0.18", "sglang-0.5"}) {
    auto e = LoadEngine(name);
    ASSERT_TRUE(e.ok()) << name << ": " << e.status().message();
    EXPECT_FALSE(e->sources.at("step_overhead_s").empty());
  }
  EXPECT_EQ(LoadEngine("vllm")->engine, "vllm");
  // A bare name is the newest version: vLLM 0.18 schedules asynchronously, 0.12 did not.
  EXPECT_EQ(LoadEngine("vllm")->name, "vllm-0.18");
  EXPECT_TRUE(LoadEngine("vllm")->overlap_scheduler);
  EXPECT_FALSE(LoadEngine("vllm-0.12")->overlap_scheduler);
  EXPECT_EQ(LoadEngine("trtllm")->kv_rule, KvMemoryRule::kFractionOfFreeAfterWeights);
  // The TensorRT-engine profile has no version number: bare "trtllm" stays the PyTorch backend's
  // newest, the runtime --emit trtllm launches.
  EXPECT_EQ(LoadEngine("trtllm")->name, "trtllm-1.0");
  EXPECT_TRUE(LoadEngine("trtllm")->emit_matches);
  EXPECT_FALSE(LoadEngine("trtllm-cpp")->emit_matches);
  EXPECT_EQ(LoadEngine("trtllm-cpp")->engine, "trtllm");
  EXPECT_EQ(LoadEngine("vllm")->kv_rule, KvMemoryRule::kFractionOfTotal);
}

TEST(EngineProfile, VersionsCompareNumberByNumber) {
  EXPECT_EQ(VersionNumbers("0.18"), (std::vector<int64_t>{0, 18}));
  EXPECT_EQ(VersionNumbers("1.0rc3"), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(VersionNumbers("0.5"), (std::vector<int64_t>{0, 5}));
  EXPECT_TRUE(VersionNumbers("next").empty());
  // A string comparison would put 0.9 after 0.18.
  EXPECT_LT(VersionNumbers("0.9"), VersionNumbers("0.18"));
  EXPECT_LT(VersionNumbers("0.18"), VersionNumbers("1.0"));
}

TEST(EngineProfile, UnknownEngineSuggests) {
  auto e = LoadEngine("vlm");
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("vllm"), std::string::npos) << e.status().message();
}

TEST(EngineProfile, MissingFieldIsNamed) {
  nlohmann::json j = nlohmann::json::parse(*catalog::ReadEmbedded("engines/vllm-0.12.json"));
  j["fields"].erase("kv_block_tokens");
  auto e = ParseEngineProfile(j, "mine.json");
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("mine.json: engine profile lacks field 'kv_block_tokens'"),
            std::string::npos)
      << e.status().message();
}

// emit_matches came after the other fields: a profile written before it (a user's, or calibrate's)
// still loads, and models the runtime its engine's launch starts.
TEST(EngineProfile, EmitMatchesIsOptionalAndTrueWhenAbsent) {
  nlohmann::json j = nlohmann::json::parse(*catalog::ReadEmbedded("engines/trtllm-cpp.json"));
  ASSERT_FALSE(ParseEngineProfile(j, "cpp.json")->emit_matches);
  j["fields"].erase("emit_matches");
  const auto e = ParseEngineProfile(j, "older.json");
  ASSERT_TRUE(e.ok()) << e.status().message();
  EXPECT_TRUE(e->emit_matches);
  j["fields"]["emit_matches"] = {{"value", "no"}, {"provenance", "measured"}, {"source", "x"}};
  const auto bad = ParseEngineProfile(j, "bad.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("field 'emit_matches' must be true or false"),
            std::string::npos)
      << bad.status().message();
}

TEST(EngineProfile, FieldWithoutSourceOrProvenanceIsRejected) {
  nlohmann::json j = nlohmann::json::parse(*catalog::ReadEmbedded("engines/vllm-0.12.json"));
  j["fields"]["step_overhead_s"]["provenance"] = "guessed";
  EXPECT_FALSE(ParseEngineProfile(j, "x.json").ok());
  j = nlohmann::json::parse(*catalog::ReadEmbedded("engines/vllm-0.12.json"));
  j["fields"]["step_overhead_s"]["source"] = "";
  EXPECT_FALSE(ParseEngineProfile(j, "x.json").ok());
  j = nlohmann::json::parse(*catalog::ReadEmbedded("engines/vllm-0.12.json"));
  j["fields"]["step_overhead_s"]["value"] = -1;
  EXPECT_FALSE(ParseEngineProfile(j, "x.json").ok());
}

TEST(EngineProfile, MisspeltFieldsOtherEnginesAndFractionalCountsAreRejected) {
  const nlohmann::json shipped =
      nlohmann::json::parse(*catalog::ReadEmbedded("engines/vllm-0.18.json"));
  nlohmann::json j = shipped;
  j["fields"]["step_overhed_s"] = j["fields"]["step_overhead_s"];
  auto e = ParseEngineProfile(j, "mine.json");
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("unknown engine profile field 'step_overhed_s'; did you "
                                      "mean 'step_overhead_s'"),
            std::string::npos)
      << e.status().message();
  j = shipped;
  j["engine"] = "foo";
  e = ParseEngineProfile(j, "mine.json");
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("must be trtllm, vllm or sglang"), std::string::npos);
  j = shipped;
  j["fields"]["cuda_graph_max_batch"]["value"] = 3.5;
  e = ParseEngineProfile(j, "mine.json");
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("'cuda_graph_max_batch' must be a whole number, got 3.5"),
            std::string::npos)
      << e.status().message();
}

TEST(EngineProfile, MeasuredRatiosAreReadAndChecked) {
  nlohmann::json j = nlohmann::json::parse(*catalog::ReadEmbedded("engines/vllm-0.12.json"));
  j["fields"]["closed_loop_ttft_ratio_p10"]["value"] = 0.5;
  j["fields"]["closed_loop_ttft_ratio_p90"]["value"] = 2.25;
  auto e = ParseEngineProfile(j, "mine.json");
  ASSERT_TRUE(e.ok()) << e.status().message();
  EXPECT_DOUBLE_EQ(e->closed_loop_ttft.p10, 0.5);
  EXPECT_DOUBLE_EQ(e->closed_loop_ttft.p90, 2.25);
  EXPECT_EQ(e->provenance.at("closed_loop_ttft_ratio_p90"), Provenance::kFitted);
  // The 10th percentile above the 90th is a broken entry, named with both values.
  j["fields"]["closed_loop_ttft_ratio_p10"]["value"] = 3;
  e = ParseEngineProfile(j, "mine.json");
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("'closed_loop_ttft_ratio_p10' (3) exceeds "
                                      "'closed_loop_ttft_ratio_p90' (2.25)"),
            std::string::npos)
      << e.status().message();
  // A ratio must be positive: a prediction times zero is no band.
  j["fields"]["closed_loop_ttft_ratio_p10"]["value"] = 0;
  EXPECT_FALSE(ParseEngineProfile(j, "mine.json").ok());
  j["fields"]["closed_loop_ttft_ratio_p10"]["value"] = 0.5;
  j["fields"].erase("closed_loop_tpot_ratio_p90");
  e = ParseEngineProfile(j, "mine.json");
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("lacks field"), std::string::npos);
}

TEST(EngineProfile, CustomAllReduceByHand) {
  // TP8 on one DGX H100, a profile with one-shot up to 256 KiB, two-shot up to 8 MiB, 8 us per
  // synchronisation; NVLink 450 GB/s x 0.82 efficiency (data/clusters/dgx-h100.json).
  EngineProfile e;
  e.custom_allreduce_max_bytes = 8 << 20;
  e.one_shot_max_bytes = 256 << 10;
  e.custom_allreduce_latency_s = 8e-6;
  const ClusterSpec c = LoadCluster("dgx-h100").value();
  const StepComm comm = StepComm::Create(c, ParseLayout("tp8").value(), e).value();
  const double bw = 450e9 * 0.82;
  // 16 KiB (batch 1 of Llama-70B's 8192 bf16 hidden): one-shot, 8 us + 7 x 16384 B / bw.
  EXPECT_NEAR(comm.TpAllReduce(16384), 8e-6 + 7 * 16384 / bw, 1e-12);
  // 1 MiB: two-shot, 2 x 8 us + 2 x 7/8 x 1 MiB / bw.
  EXPECT_NEAR(comm.TpAllReduce(1 << 20), 16e-6 + 2 * 7.0 / 8 * (1 << 20) / bw, 1e-12);
  // 64 MiB: beyond the custom kernel, NCCL's ring/NVLS model: at least the bandwidth term.
  EXPECT_GT(comm.TpAllReduce(64 << 20), 2 * 7.0 / 8 * (64 << 20) / 450e9);
}

TEST(EngineProfile, StepOverheadAddsOncePerIteration) {
  // Decode TPOT with a 1.5 ms per-step overhead (batch within the CUDA-graph range) is the bare
  // TPOT + 1.5 ms, whatever the host would need to launch kernels one by one.
  const ModelSpec m = LoadModel("llama-3.1-8b").value();
  const ClusterSpec c = WithGpus(LoadCluster("dgx-h100").value(), 1).value();
  PerfOptions bare;
  PerfOptions eng;
  eng.engine.step_overhead_s = 1.5e-3;
  eng.engine.cuda_graph_max_batch = 64;
  eng.engine.host_launch_s_per_kernel = 1e-3;
  eng.engine.kernels.attention = 1;
  Workload w;
  w.batch = 32;
  w.prompt_tokens = 1024;
  const Layout l = ParseLayout("tp1").value();
  const auto a = StepModel::Create(m, c, l, bare).value().Estimate(w);
  const auto b = StepModel::Create(m, c, l, eng).value().Estimate(w);
  // One kernel per layer also holds the stream for the GPU's per-kernel latency.
  const double launch_s = 32 * c.gpu.kernel_latency_s;
  EXPECT_NEAR(b.tpot_s - a.tpot_s, 1.5e-3 + launch_s, 1e-12);
  // Outside a graph the host issues the step's 32 kernels at 1 ms each; the GPU's work hides
  // only what it lasts: the step takes 32 ms of host time plus the per-step overhead.
  w.batch = 128;
  const auto b2 = StepModel::Create(m, c, l, eng).value().Estimate(w);
  EXPECT_NEAR(b2.tpot_s, 1.5e-3 + 32 * 1e-3, 1e-12);
  // The framework's work per layer applies to iterations that carry prompt tokens: a decode
  // batch, in the graph range or not, is unchanged by it ...
  eng.engine.eager_host_s_per_layer = 0.5e-3;
  const auto b3 = StepModel::Create(m, c, l, eng).value().Estimate(w);
  EXPECT_NEAR(b3.tpot_s, b2.tpot_s, 1e-12);
  // ... while a prefill's host time is its 32 launches at 1 ms and its 32 layers at 0.5 ms, 48 ms
  // in all, of which the GPU's work hides what it lasts.
  const StepModel with = StepModel::Create(m, c, l, eng).value();
  PerfOptions launches_only = eng;
  launches_only.engine.eager_host_s_per_layer = 0;
  launches_only.engine.host_launch_s_per_kernel = 0;
  launches_only.engine.step_overhead_s = 0;
  const StepModel gpu_only = StepModel::Create(m, c, l, launches_only).value();
  const double gpu_s = gpu_only.EstimatePrefill(256).ttft_s;
  ASSERT_LT(gpu_s, 48e-3);  // a 256-token prompt on an H100: the host binds
  EXPECT_NEAR(with.EstimatePrefill(256).ttft_s, 1.5e-3 + 48e-3, 1e-9);
}

TEST(EngineProfile, KernelLatencyPerLayerByHand) {
  // Each kernel a decoder layer launches holds the stream for the GPU's per-kernel latency
  // inside a CUDA graph. Llama-3.1-8B (32 layers) decode, an engine launching 5 kernels per
  // attention block and 4 per dense FFN, 1 quantisation kernel before each fp8 GEMM (2 per block),
  // the norm fused into the all-reduce at TP > 1:
  //   tp1 bf16: 32 x (5 + 4) = 288 kernels
  //   tp1 fp8:  32 x (5 + 2 + 4 + 2) = 416
  //   tp2 bf16 with the fused norm: 32 x (4 + 3) = 224
  const ModelSpec m = LoadModel("llama-3.1-8b").value();
  const ClusterSpec c = WithGpus(LoadCluster("dgx-h100").value(), 2).value();
  Workload w;
  w.batch = 4;
  w.prompt_tokens = 512;
  auto launch = [&](const char* layout, Dtype dtype, bool fused) {
    PerfOptions o;
    o.weight_dtype = dtype;
    o.engine.kernels = {5, 4, 8, 2, 1};
    o.engine.cuda_graph_max_batch = 64;
    o.engine.fused_allreduce_norm = fused;
    return StepModel::Create(m, c, ParseLayout(layout).value(), o)
        .value()
        .Estimate(w)
        .decode.launch_s;
  };
  const double k = c.gpu.kernel_latency_s;
  ASSERT_GT(k, 0);
  EXPECT_NEAR(launch("tp1", Dtype::kBf16, true), 288 * k, 1e-12);
  EXPECT_NEAR(launch("tp1", Dtype::kFp8, true), 416 * k, 1e-12);
  EXPECT_NEAR(launch("tp2", Dtype::kBf16, true), 224 * k, 1e-12);
  EXPECT_NEAR(launch("tp2", Dtype::kBf16, false), 288 * k, 1e-12);
}

TEST(EngineProfile, TokenBudgetFollowsThePromptWhereItRunsWhole) {
  // TensorRT-LLM without chunked prefill: the longest prompt plus the 1,500-token headroom
  // NVIDIA's generator writes (1,024 -> 2,524; 8,192 -> 9,692), below the 8,192 default as well
  // as above it; a spread of mean 1,024 reaching 6,144 -> 7,644; one of mean 2,048 reaching
  // 24,576 -> the 8,192 default (its longest prompts run alone). The trtllm-cpp profile's rule,
  // fitted on MLPerf rows, adds it to the mean: 2,524. vLLM chunks prompts and keeps its 8,192.
  const EngineProfile trt = LoadEngine("trtllm").value();
  EXPECT_EQ(EngineTokenBudget(trt, 1024, 1024), 1024 + 1500);
  EXPECT_EQ(EngineTokenBudget(trt, 8192, 8192), 8192 + 1500);
  EXPECT_EQ(EngineTokenBudget(trt, 1024, 6144), 6144 + 1500);
  EXPECT_EQ(EngineTokenBudget(trt, 2048, 24576), 8192);
  EXPECT_EQ(EngineTokenBudget(LoadEngine("trtllm-cpp").value(), 1024, 6144), 1024 + 1500);
  const EngineProfile vllm = LoadEngine("vllm").value();
  EXPECT_EQ(EngineTokenBudget(vllm, 1024, 1024), 8192);
  EXPECT_EQ(EngineTokenBudget(vllm, 20000, 30000), 8192);
}

TEST(EngineProfile, VllmPromptIterationsPayTheHostsDispatchPerLayer) {
  // vLLM V1 replays CUDA graphs only for iterations of up to 512 tokens; one carrying a prompt
  // runs its compiled graph with the host dispatching each decoder layer, 0.8 ms a layer in
  // NVIDIA AIConfigurator's calibration (closed-loop-ttft.md section 3). Llama-3.1-8B (32
  // layers) at TP8 prefills 1,024 tokens in far less GPU time than 32 x 0.8 = 25.6 ms, so its
  // TTFT is that plus the engine's step overhead; Llama-3.1-70B at TP2 prefilling 8,192 tokens
  // computes longer than its 80 x 0.8 = 64 ms, which then hides; a decode step, and a prompt of
  // up to 512 tokens, replays its graph.
  constexpr double kNvidiaHostSPerLayer = 0.8e-3;
  // A StepModel points at its model and cluster: they outlive every step built on them.
  const ModelSpec llama8b = LoadModel("llama-3.1-8b").value();
  const ModelSpec llama70b = LoadModel("llama-3.1-70b").value();
  const ClusterSpec c = LoadCluster("dgx-h100").value();
  for (const char* name : {"vllm-0.12", "vllm-0.18"}) {
    SCOPED_TRACE(name);
    PerfOptions with;
    with.engine = LoadEngine(name).value();
    with.max_batched_tokens = static_cast<int64_t>(with.engine.max_batched_tokens);
    PerfOptions without = with;
    without.engine.eager_host_s_per_layer = 0;
    auto step = [&](const ModelSpec& model, const char* layout, const PerfOptions& o) {
      return StepModel::Create(model, c, ParseLayout(layout).value(), o).value();
    };
    const StepModel small = step(llama8b, "tp8", with);
    const StepModel small_gpu = step(llama8b, "tp8", without);
    ASSERT_LT(small_gpu.EstimatePrefill(1024).ttft_s,
              with.engine.step_overhead_s + 32 * kNvidiaHostSPerLayer);
    EXPECT_NEAR(small.EstimatePrefill(1024).ttft_s,
                with.engine.step_overhead_s + 32 * kNvidiaHostSPerLayer, 1e-9);
    const double gpu_bound_s = step(llama70b, "tp2", without).EstimatePrefill(8192).ttft_s;
    ASSERT_GT(gpu_bound_s, 80 * kNvidiaHostSPerLayer);
    EXPECT_NEAR(step(llama70b, "tp2", with).EstimatePrefill(8192).ttft_s, gpu_bound_s, 1e-12);
    Workload w;
    w.batch = 64;
    w.prompt_tokens = 1024;
    EXPECT_NEAR(small.Estimate(w).tpot_s, small_gpu.Estimate(w).tpot_s, 1e-12);
    // A prompt of up to max_cudagraph_capture_size (512) tokens replays V1's piecewise graphs:
    // no host floor.
    EXPECT_NEAR(small.EstimatePrefill(512).ttft_s, small_gpu.EstimatePrefill(512).ttft_s, 1e-12);
    EXPECT_GT(small.EstimatePrefill(513).ttft_s, 32 * kNvidiaHostSPerLayer);
  }
}

TEST(EngineProfile, KvBudgetRulesByHand) {
  // Llama-3.1-8B bf16 on one H100. vLLM: weights + KV + buffers within 0.9 x HBM.
  // TensorRT-LLM: KV gets 0.9 of what is free after weights, activations and a 1 GiB reserve.
  const ModelSpec m = LoadModel("llama-3.1-8b").value();
  const ClusterSpec c = WithGpus(LoadCluster("dgx-h100").value(), 1).value();
  const Layout l = ParseLayout("tp1").value();
  Workload w;
  w.batch = 1;
  PerfOptions v;
  v.engine = LoadEngine("vllm").value();
  v.gpu_memory_utilization = v.engine.memory_fraction;
  PerfOptions t;
  t.engine = LoadEngine("trtllm").value();
  t.gpu_memory_utilization = t.engine.memory_fraction;
  const MemoryPerGpu mv = StepModel::Create(m, c, l, v).value().Estimate(w).memory;
  const MemoryPerGpu mt = StepModel::Create(m, c, l, t).value().Estimate(w).memory;
  const double hbm = c.gpu.hbm_bytes;
  EXPECT_DOUBLE_EQ(mv.usable_bytes, 0.9 * hbm);
  // fixed = weights + activations (without the batch's logits) + buffers, all in both.
  const double logits = 128256.0 * 4;  // one sequence's fp32 logits row
  const double fixed = mt.weight_bytes + mt.activation_bytes - logits + mt.comm_buffer_bytes;
  EXPECT_NEAR(mt.usable_bytes, fixed + 0.9 * (hbm - 1073741824.0 - fixed), 1.0);
  // With 16 GB of weights, 0.9 of the free memory is more than vLLM's 0.9 of the total.
  EXPECT_GT(mt.kv_capacity_tokens, mv.kv_capacity_tokens);
}

}  // namespace
}  // namespace shardwise
