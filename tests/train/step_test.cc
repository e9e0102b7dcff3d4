// The training-step model: MFU accounting, memory by ZeRO stage on a real layout, the schedules'
// effect, and the one-line errors for bad configs.
#include "shardwise/train/step.h"

#include <gtest/gtest.h>

#include "shardwise/model/accounting.h"
#include "shardwise/model/catalog.h"

namespace shardwise::train {
namespace {

struct Fixture {
  ModelSpec model;
  ClusterSpec cluster;
  TrainEngine engine;
};

Fixture Make(const std::string& model, const std::string& cluster, int64_t nodes,
             const std::string& engine = "megatron-core") {
  return {LoadModel(model).value(), WithNodes(LoadCluster(cluster).value(), nodes).value(),
          LoadTrainEngine(engine).value()};
}

// A config without the search's freedoms: ZeRO-1, the given recompute mode and GEMM format.
TrainConfig Config(int64_t seq_len, int64_t global_batch, Recompute recompute,
                   Dtype dtype = Dtype::kBf16) {
  TrainConfig c;
  c.seq_len = seq_len;
  c.global_batch = global_batch;
  c.zero = 1;
  c.recompute = recompute;
  c.dtype = dtype;
  return c;
}

TrainEstimate Estimate(const Fixture& f, const std::string& layout, const TrainConfig& c) {
  auto model = TrainModel::Create(f.model, f.cluster, ParseLayout(layout).value(), f.engine);
  EXPECT_TRUE(model.ok()) << model.status().message();
  auto e = model->Estimate(c);
  EXPECT_TRUE(e.ok()) << e.status().message();
  return e.value();
}

TEST(TrainFlops, MegatronFormula) {
  // Megatron-LM eq. 3: F = 96 B s l h^2 (1 + s / 6h + V / 16 l h). GPT 1T row: B = 3072,
  // s = 2048, l = 128, h = 25,600, V = 51,200. Our count adds the biases (13 h per layer, about
  // 1 / h relative): within 0.1%.
  const ModelSpec m = LoadModel("megatron-gpt-1t").value();
  TrainConfig c;
  c.seq_len = 2048;
  c.global_batch = 3072;
  const double b = 3072, s = 2048, l = 128, h = 25600, v = 51200;
  const double formula = 96 * b * s * l * h * h * (1 + s / (6 * h) + v / (16 * l * h));
  const IterationFlops f = CountIterationFlops(m, c);
  EXPECT_NEAR(f.megatron / formula, 1.0, 1e-3);
  EXPECT_DOUBLE_EQ(f.model, 3 * f.forward);  // PaLM: three passes, no recompute
  EXPECT_DOUBLE_EQ(f.hardware, f.megatron);  // full recompute executes all four
  c.recompute = Recompute::kNone;
  EXPECT_DOUBLE_EQ(CountIterationFlops(m, c).hardware, f.model);
  // Selective recompute reruns the attention scores' forward where they are materialised;
  // FlashAttention keeps none, so it reruns nothing (step_test's engine runs no extra forward
  // either: the HFU once counted work the step did not do).
  c.recompute = Recompute::kSelective;
  EXPECT_DOUBLE_EQ(CountIterationFlops(m, c, 1, true).hardware, f.model + f.attention_forward);
  EXPECT_DOUBLE_EQ(CountIterationFlops(m, c, 1, false).hardware, f.model);
}

TEST(TrainFlops, MfuAccounting) {
  // MFU as Megatron-LM counts it: F / (step x GPUs x peak). Hand check on GPT 1.7B, 32 A100s
  // (312 TFLOP/s bf16 peak), B = 512, s = 2048: F = 96 B s l h^2 (1 + s/6h + V/16lh).
  const Fixture f = Make("megatron-gpt-1.7b", "dgx-a100", 4, "megatron-lm-sc21");
  TrainConfig c;
  c.seq_len = 2048;
  c.global_batch = 512;
  c.micro_batch = 4;
  const TrainEstimate e = Estimate(f, "dp32", c);
  const double b = 512, s = 2048, l = 24, h = 2304, v = 51200;
  const double flops = 96 * b * s * l * h * h * (1 + s / (6 * h) + v / (16 * l * h));
  EXPECT_NEAR(e.hardware_tflops_per_gpu, flops / (e.step_s * 32) / 1e12,
              1e-3 * e.hardware_tflops_per_gpu);
  EXPECT_NEAR(e.hfu, e.hardware_tflops_per_gpu / 312, 1e-6);
  EXPECT_NEAR(e.tokens_per_s, 512 * 2048 / e.step_s, 1e-6 * e.tokens_per_s);
  EXPECT_NEAR(e.tokens_per_s_per_gpu, e.tokens_per_s / 32, 1e-9 * e.tokens_per_s);
  // PaLM's MFU strips the recomputed forward: MFU / HFU = 3 passes / Megatron-LM's count.
  EXPECT_NEAR(e.mfu / e.hfu, e.flops.model / e.flops.megatron, 1e-9);
  // Without recompute the executed FLOPs are PaLM's three passes: both utilisations agree.
  c.recompute = Recompute::kNone;
  const TrainEstimate none = Estimate(f, "dp32", c);
  EXPECT_NEAR(none.mfu, none.hfu, 1e-12);
}

TEST(TrainStep, MemoryByZeroStageOnALayout) {
  // Llama-3.1-8B on 16 H100s, dp16, megatron-core (bf16 weights and gradient buffer, fp32 Adam
  // states): per GPU the whole model, P = 8.03e9 parameters: ZeRO-0 2 + 2 + 12 = 16 B per
  // parameter; ZeRO-1 2 + 2 + 12/16; ZeRO-2 2 + 14/16; ZeRO-3 16/16.
  const Fixture f = Make("llama-3.1-8b", "dgx-h100", 2);
  const double p = static_cast<double>(CountParams(f.model).total);
  TrainConfig c;
  c.seq_len = 4096;
  c.global_batch = 64;
  const double expected[] = {16.0, 2 + 2 + 12.0 / 16, 2 + 14.0 / 16, 16.0 / 16};
  for (int zero = 0; zero <= 3; ++zero) {
    c.zero = zero;
    const TrainEstimate e = Estimate(f, "dp16", c);
    const ModelStates& s = e.memory.states;
    EXPECT_NEAR((s.weight_bytes + s.grad_bytes + s.optimizer_bytes) / p, expected[zero], 1e-9)
        << "ZeRO-" << zero;
  }
}

TEST(TrainStep, InterleavingShrinksTheBubble) {
  Fixture f = Make("llama-3.1-70b", "dgx-h100", 8);
  f.engine.schedules.push_back(ScheduleKind::kZeroBubble);  // Megatron-Core itself lacks it
  TrainConfig c;
  c.seq_len = 4096;
  c.global_batch = 64;
  c.zero = 1;
  const TrainEstimate one = Estimate(f, "tp8pp4dp2", c);
  c.schedule = {ScheduleKind::kInterleaved, 2};
  const TrainEstimate two = Estimate(f, "tp8pp4dp2", c);
  c.schedule = {ScheduleKind::kZeroBubble, 1};
  const TrainEstimate zero = Estimate(f, "tp8pp4dp2", c);
  // m = 64 / (2 x 1) = 32: bubbles 3/32 and 3/64 of the pipeline time (uniform stages but the
  // last, which also carries the LM head, so within 10%).
  EXPECT_NEAR(one.bubble_fraction, 3.0 / 32, 0.1 * 3.0 / 32);
  EXPECT_NEAR(two.bubble_fraction, 3.0 / 64, 0.1 * 3.0 / 64);
  EXPECT_EQ(zero.bubble_s, 0);
  EXPECT_LT(two.step_s, one.step_s);
  EXPECT_GT(two.memory.activation_bytes, one.memory.activation_bytes);
}

TEST(TrainStep, RecomputeTradesTimeForMemory) {
  const Fixture f = Make("llama-3.1-8b", "dgx-h100", 1);
  TrainConfig c;
  c.seq_len = 4096;
  c.global_batch = 32;
  c.zero = 1;
  c.recompute = Recompute::kFull;
  const TrainEstimate full = Estimate(f, "tp2dp4", c);
  c.recompute = Recompute::kNone;
  const TrainEstimate none = Estimate(f, "tp2dp4", c);
  EXPECT_LT(none.step_s, full.step_s);
  EXPECT_GT(none.memory.activation_bytes, full.memory.activation_bytes);
  // Full recompute repeats the forward of every layer but not the LM head (2 V h of the
  // 2 x 8.03e9 FLOPs per token: 6.5%).
  const double again = (full.backward.gemm_s - none.backward.gemm_s) / none.forward.gemm_s;
  EXPECT_LT(again, 1.0);
  EXPECT_GT(again, 0.9);
}

TEST(TrainStep, BlockRecomputeRecomputesTheFirstLayersOfEachChunk) {
  // Llama-3.1-8B, pp 1: one chunk of 32 layers. full:8 recomputes 8 of them: hardware FLOPs =
  // model + 8/32 of the recomputed forward (Megatron-LM's count minus PaLM's).
  const Fixture f = Make("llama-3.1-8b", "dgx-h100", 1);
  TrainConfig c = Config(4096, 32, Recompute::kFull);
  c.recompute_layers = 8;
  const TrainEstimate part = Estimate(f, "dp8", c);
  EXPECT_EQ(part.config.RecomputeText(), "full:8");
  EXPECT_NEAR(part.flops.hardware,
              part.flops.model + 0.25 * (part.flops.megatron - part.flops.model),
              1e-9 * part.flops.hardware);
  c.recompute_layers = 0;
  const TrainEstimate all = Estimate(f, "dp8", c);
  c.recompute = Recompute::kNone;
  const TrainEstimate none = Estimate(f, "dp8", c);
  EXPECT_LT(none.step_s, part.step_s);
  EXPECT_LT(part.step_s, all.step_s);
  EXPECT_LT(all.memory.activation_bytes, part.memory.activation_bytes);
  EXPECT_LT(part.memory.activation_bytes, none.memory.activation_bytes);
  TrainConfig parsed;
  ASSERT_TRUE(ParseRecompute("full:8", parsed).ok());
  EXPECT_EQ(parsed.recompute_layers, 8);
  EXPECT_FALSE(ParseRecompute("full:0", parsed).ok());
}

TEST(TrainStep, HostBoundWhenKernelsOutpaceTheGpu) {
  // An engine whose host takes 10 ms per kernel and captures no CUDA graphs: a dense layer's
  // forward issues kernels_attention + kernels_dense_mlp kernels (bf16: no casts), its backward
  // twice that, so a micro-batch of Llama-3.1-8B on one GPU costs the host
  // 32 x 3 x (9 + 7) x 10 ms = 15.36 s, far above its GPU time.
  Fixture f = Make("llama-3.1-8b", "dgx-h100", 1);
  f.engine.cuda_graphs = false;
  f.engine.gpus["h100-sxm"].host_s_per_kernel = 0.01;
  const TrainEstimate e = Estimate(f, "dp8", Config(1024, 8, Recompute::kNone));
  const double host = 32 * 3 * (f.engine.kernels_attention + f.engine.kernels_dense_mlp) * 0.01;
  EXPECT_NEAR(e.pipeline_s, host, 1e-6 * host);
  EXPECT_EQ(e.bound, "host launches (CPU-bound)");
}

TEST(TrainStep, DroplessMoeWaitsOnTheHost) {
  // Dropless routing copies the tokens-per-expert counts to the host in every MoE layer: the
  // host cannot run ahead, so a micro-batch takes at least as long as with tokens dropped and
  // padded (static shapes, CUDA graphs, no wait).
  const Fixture f = Make("qwen3-30b-a3b", "dgx-b200", 1);
  TrainConfig c = Config(4096, 64, Recompute::kNone, Dtype::kFp8);
  c.fp8_recipe = Fp8Recipe::kMxfp8;
  const TrainEstimate dropless = Estimate(f, "dp8ep8", c);
  c.moe_token_drop = true;
  const TrainEstimate dropped = Estimate(f, "dp8ep8", c);
  EXPECT_GT(dropless.step_s, dropped.step_s);
  EXPECT_GT(dropless.host_exposed_s, 0);
  EXPECT_EQ(dropped.host_exposed_s, 0);
}

TEST(TrainStep, TokenDropDispatchesThroughTheAllToAllDispatcher) {
  // Megatron-Core's flex dispatcher (DeepEP, HybridEP) does not pad experts' inputs to capacity,
  // so a token-drop run sends k copies of each token through the all-to-all dispatcher whatever
  // the engine runs dropless: its EP time is the one an engine without the flex dispatcher gives.
  // On two H100 nodes (EP 16, top-8 of 128 experts) the flex dispatcher sends a token once per
  // destination node across the network and is the cheaper of the two.
  Fixture flex = Make("qwen3-30b-a3b", "dgx-h100", 2);
  ASSERT_TRUE(flex.engine.ep_dispatch_dedup);
  ASSERT_FALSE(flex.engine.ep_dispatch_dedup_token_drop);  // megatron-core.json
  Fixture all_to_all = flex;
  all_to_all.engine.ep_dispatch_dedup = false;
  TrainConfig c = Config(4096, 64, Recompute::kFull);
  const double flex_dropless = Estimate(flex, "dp16ep16", c).forward.ep_comm_s;
  const double a2a_dropless = Estimate(all_to_all, "dp16ep16", c).forward.ep_comm_s;
  c.moe_token_drop = true;
  const double flex_dropped = Estimate(flex, "dp16ep16", c).forward.ep_comm_s;
  EXPECT_DOUBLE_EQ(flex_dropped, a2a_dropless);
  EXPECT_LT(flex_dropless, a2a_dropless);
  // A profile whose dedup dispatcher also takes padded inputs dispatches token drop with it.
  Fixture padding = flex;
  padding.engine.ep_dispatch_dedup_token_drop = true;
  EXPECT_DOUBLE_EQ(Estimate(padding, "dp16ep16", c).forward.ep_comm_s, flex_dropless);
}

TEST(TrainStep, ExpertGemmsSeeTheSameRowsUnderContextParallelism) {
  // Qwen3-30B-A3B (128 experts, top 8) over an EP16 group on 16 GPUs, 8 experts each. Each GPU
  // holds 8,192 tokens of a micro-batch either as two whole 4,096-token sequences (dp16) or as
  // halves of two 8,192-token sequences (dp8cp2): the group routes 16 x 8,192 x 8 token copies
  // to 128 experts either way, 8,192 rows per expert, so every weight GEMM (attention's too: the
  // same 8,192 rows) takes the same time. The CP ranks' slices once counted as the whole
  // sequence halved the experts' rows.
  const Fixture f = Make("qwen3-30b-a3b", "dgx-h100", 2);
  TrainConfig whole = Config(4096, 64, Recompute::kNone);
  whole.micro_batch = 2;
  TrainConfig sliced = Config(8192, 32, Recompute::kNone);
  sliced.micro_batch = 2;
  const TrainEstimate dp = Estimate(f, "dp16ep16", whole);
  const TrainEstimate cp = Estimate(f, "dp8cp2ep16", sliced);
  EXPECT_NEAR(cp.forward.gemm_s / dp.forward.gemm_s, 1.0, 1e-12);
  EXPECT_NEAR(cp.backward.gemm_s / dp.backward.gemm_s, 1.0, 1e-12);
}

TEST(TrainStep, UnevenPipelineOfLlama405B) {
  // 126 layers over pp 8 x interleaved:8 (NVIDIA's H100 recipe): refused before, now split as
  // Megatron-Core splits it (embedding and loss counted as layers). Rank 0 holds 15 layers and
  // the embedding, rank 7 15 layers and the loss, ranks 1-6 16 layers each.
  const Fixture f = Make("llama-3.1-405b", "dgx-h100", 128);
  TrainConfig c = Config(8192, 512, Recompute::kNone, Dtype::kFp8);
  c.schedule = {ScheduleKind::kInterleaved, 8};
  const TrainEstimate e = Estimate(f, "dp8tp8cp2pp8", c);
  auto layers = [&](int64_t rank) {
    int64_t n = 0;
    for (const PipelineChunk& chunk : e.split.ChunksOf(rank)) n += chunk.layers;
    return n;
  };
  EXPECT_EQ(layers(0), 15);
  EXPECT_EQ(layers(3), 16);
  EXPECT_EQ(layers(7), 15);
  EXPECT_GT(e.tokens_per_s_per_gpu, 0);
}

TEST(TrainStepErrors, BatchNotDivisible) {
  const Fixture f = Make("llama-3.1-8b", "dgx-h100", 1);
  auto model = TrainModel::Create(f.model, f.cluster, ParseLayout("dp8").value(), f.engine);
  TrainConfig c;
  c.global_batch = 36;
  c.micro_batch = 2;
  auto e = model->Estimate(c);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("not divisible into micro-batches x DP = 2 x 8 = 16"),
            std::string::npos)
      << e.status().message();
}

TEST(TrainStepErrors, ZeroThreeWithPipeline) {
  const Fixture f = Make("llama-3.1-8b", "dgx-h100", 1);
  auto model = TrainModel::Create(f.model, f.cluster, ParseLayout("pp2dp4").value(), f.engine);
  TrainConfig c;
  c.global_batch = 32;
  c.zero = 3;
  auto e = model->Estimate(c);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("ZeRO-3"), std::string::npos);
}

TEST(TrainStepErrors, SequenceParallelismNeedsWholeSlices) {
  // Megatron-Core's sequence parallelism splits each sequence over the TP ranks: 3 tokens do not
  // split over tp8 (the engine runs it with every TP layout, megatron-core.json).
  const Fixture f = Make("llama-3.1-8b", "dgx-h100", 1);
  ASSERT_TRUE(f.engine.sequence_parallel);
  auto model = TrainModel::Create(f.model, f.cluster, ParseLayout("tp8").value(), f.engine);
  TrainConfig c;
  c.global_batch = 8;
  c.seq_len = 3;
  auto e = model->Estimate(c);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("multiple of tp x cp = 8"), std::string::npos)
      << e.status().message();
  c.seq_len = 16;
  EXPECT_TRUE(model->Estimate(c).ok());
}

TEST(TrainStepErrors, BlockRecomputeBeyondAChunk) {
  // Llama-3.1-8B's 32 layers over pp8: chunks of 4. Recomputing 5 layers a chunk is not a
  // setting Megatron-Core has (it once ran as full recompute under the label full:5).
  const Fixture f = Make("llama-3.1-8b", "dgx-h100", 1);
  auto model = TrainModel::Create(f.model, f.cluster, ParseLayout("pp8").value(), f.engine);
  TrainConfig c;
  c.global_batch = 8;
  c.recompute = Recompute::kFull;
  c.recompute_layers = 5;
  auto e = model->Estimate(c);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("use full:1 to full:4, or full"), std::string::npos)
      << e.status().message();
  c.recompute_layers = 4;
  EXPECT_TRUE(model->Estimate(c).ok());
}

TEST(TrainStepErrors, EngineWithoutTheSchedule) {
  const Fixture f = Make("llama-3.1-8b", "dgx-h100", 1, "megatron-lm-sc21");
  auto model = TrainModel::Create(f.model, f.cluster, ParseLayout("pp2dp4").value(), f.engine);
  TrainConfig c;
  c.global_batch = 32;
  c.schedule = {ScheduleKind::kZeroBubble, 1};
  EXPECT_FALSE(model->Estimate(c).ok());
}

}  // namespace
}  // namespace shardwise::train
