// Speculative decoding in the step model against hand calculations: tokens per step from the
// acceptance, the verification pass, the draft's passes and its KV.
#include "shardwise/perf/speculative.h"

#include <gtest/gtest.h>

#include "shardwise/hw/cluster.h"
#include "shardwise/model/catalog.h"
#include "shardwise/perf/step.h"

namespace shardwise {
namespace {

StepEstimate Estimate(const std::string& model, const std::string& layout, PerfOptions o,
                      int64_t batch = 16) {
  const ModelSpec m = LoadModel(model).value();
  const ClusterSpec c = LoadCluster("dgx-h200").value();
  const StepModel step = StepModel::Create(m, c, ParseLayout(layout).value(), o).value();
  Workload w;
  w.batch = batch;
  w.prompt_tokens = 2048;
  w.output_tokens = 256;
  w.decode_context_tokens = 2048;
  return step.Estimate(w);
}

TEST(Speculative, TokensPerStepFromCumulativeAcceptance) {
  // 1 + 0.8 + 0.8 x 0.6 + 0.8 x 0.6 x 0.5 = 1 + 0.8 + 0.48 + 0.24 = 2.52.
  EXPECT_NEAR(ExpectedTokensPerStep({0.8, 0.6, 0.5}), 2.52, 1e-12);
  // One mean for every position: 1 + 0.7 + 0.49 + 0.343 = 2.533.
  EXPECT_NEAR(ExpectedTokensPerStep({0.7, 0.7, 0.7}), 2.533, 1e-12);
  EXPECT_DOUBLE_EQ(ExpectedTokensPerStep({}), 1.0);
  // Every draft token accepted: k + 1.
  EXPECT_DOUBLE_EQ(ExpectedTokensPerStep({1, 1, 1, 1}), 5.0);
}

TEST(Speculative, MtpStepIsVerificationPlusDraftOverTokens) {
  PerfOptions o;
  o.weight_dtype = o.kv_dtype = Dtype::kFp8;
  const StepEstimate plain = Estimate("deepseek-v3", "tp8", o);
  o.speculative.method = SpeculativeMethod::kMtp;
  o.speculative.acceptance = {0.8, 0.6, 0.5};
  const StepEstimate mtp = Estimate("deepseek-v3", "tp8", o);
  EXPECT_NEAR(mtp.tokens_per_step, 2.52, 1e-12);
  EXPECT_GT(mtp.draft_s, 0);
  EXPECT_NEAR(mtp.tpot_s, mtp.decode.total_s / 2.52, 1e-15);
  // The verification pass of 4 tokens per sequence reads the same weights and KV as one token:
  // at batch 16 it costs less than two plain steps, so three accepted-on-average tokens win.
  EXPECT_LT(mtp.decode.total_s - mtp.draft_s, 2 * plain.decode.total_s);
  EXPECT_LT(mtp.tpot_s, plain.tpot_s);
  // Draft KV: one more MLA layer, kv_lora_rank + rope dims = 512 + 64 = 576 fp8 bytes per token,
  // replicated on every TP rank, at the peak context 2048.
  EXPECT_NEAR(mtp.memory.kv_bytes_per_sequence - plain.memory.kv_bytes_per_sequence, 576.0 * 2048,
              1e-6);
  EXPECT_GT(mtp.memory.weight_bytes, plain.memory.weight_bytes);
}

TEST(Speculative, DraftModelRunsKPassesOfItsOwnDecode) {
  // llama-3.1-70b at tp8 drafted by llama-3.1-8b (same 128,256-token vocabulary), k = 4. The
  // draft's share is four of its own tp8 decode steps at the same batch and context.
  PerfOptions o;
  o.speculative.method = SpeculativeMethod::kDraftModel;
  o.speculative.acceptance = {0.7, 0.7, 0.7, 0.7};
  o.speculative.draft_model = std::make_shared<const ModelSpec>(LoadModel("llama-3.1-8b").value());
  const StepEstimate e = Estimate("llama-3.1-70b", "tp8", o);
  const StepEstimate draft = Estimate("llama-3.1-8b", "tp8", PerfOptions{});
  EXPECT_NEAR(e.draft_s, 4 * draft.decode.total_s, 1e-12);
  // 1 + 0.7 + 0.49 + 0.343 + 0.2401 = 2.7731.
  EXPECT_NEAR(e.tokens_per_step, 2.7731, 1e-12);
  // The draft's KV: 32 layers x 8 KV heads x 128 dims x 2 (K, V) x 2 bytes = 131,072 bytes per
  // token over 8 TP ranks (one KV head each), 16,384 per GPU, at the peak context 2048.
  const StepEstimate plain = Estimate("llama-3.1-70b", "tp8", PerfOptions{});
  EXPECT_NEAR(e.memory.kv_bytes_per_sequence - plain.memory.kv_bytes_per_sequence, 16384.0 * 2048,
              1e-6);
}

}  // namespace
}  // namespace shardwise

namespace shardwise {
namespace {

TEST(Speculative, EagleHeadPrefillsThePromptOnce) {
  // Llama-3.1-8B on one H200, a 1,000-token prompt, EAGLE with 2 draft tokens: the head (one
  // Llama layer and the LM head) runs once over the prompt for its own KV. One layer over T
  // tokens: projections 2 T x (4096 x (4096 + 2 x 1024) + 4096 x 4096 + 3 x 4096 x 14336) =
  // 2 T x 218,103,808; attention T (T + 1) / 2 pairs x 2 x 32 heads x (128 + 128) = 16,384
  // FLOPs each; the LM head for the last token 2 x 4096 x 128,256. T = 1,000:
  // 436,207,616,000 + 8,200,192,000 + 1,050,673,152 = 445,458,481,152 FLOPs (elementwise work
  // beside them is under 1%).
  const ModelSpec m = LoadModel("llama-3.1-8b").value();
  const ClusterSpec c = WithGpus(LoadCluster("dgx-h200").value(), 1).value();
  PerfOptions o;
  const StepModel plain = StepModel::Create(m, c, ParseLayout("tp1").value(), o).value();
  o.speculative.method = SpeculativeMethod::kEagle;
  o.speculative.acceptance = {0.7, 0.5};
  const StepModel eagle = StepModel::Create(m, c, ParseLayout("tp1").value(), o).value();
  const double added =
      eagle.EstimatePrefill(1000).prefill.flops - plain.EstimatePrefill(1000).prefill.flops;
  EXPECT_NEAR(added / 445'458'481'152.0, 1.0, 0.01);
  EXPECT_GT(eagle.EstimatePrefill(1000).ttft_s, plain.EstimatePrefill(1000).ttft_s);
}

}  // namespace
}  // namespace shardwise
