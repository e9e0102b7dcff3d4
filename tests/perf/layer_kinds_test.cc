// The new layer kinds in the step model, against hand calculations: recurrent (Gated DeltaNet,
// Mamba-2) layers whose state per sequence and cost per token do not grow with the context, and
// DSA sparse attention whose core stops growing at the top-k while its indexer reads every key.
#include <gtest/gtest.h>

#include "perf_models.h"
#include "shardwise/model/catalog.h"
#include "shardwise/perf/attention.h"
#include "shardwise/perf/recurrent.h"
#include "shardwise/perf/sparse_attention.h"
#include "shardwise/perf/step.h"

namespace shardwise {
namespace {

using testing::Model;

StepEstimate Estimate(const ModelSpec& m, const std::string& cluster, const std::string& layout,
                      int64_t context, PerfOptions o = {}) {
  const ClusterSpec spec = LoadCluster(cluster).value();
  auto step = StepModel::Create(m, spec, ParseLayout(layout).value(), o);
  EXPECT_TRUE(step.ok()) << step.status().message();
  Workload w;
  w.batch = 1;
  w.prompt_tokens = context;
  w.output_tokens = 128;
  w.decode_context_tokens = context;
  return step->Estimate(w);
}

TEST(RecurrentLayers, StateMemoryIsFlatFrom1kTo128k) {
  // Qwen3.5-35B-A3B on two H100s (tp2), one sequence. Per GPU:
  //   state: 30 Gated DeltaNet layers x 2,146,304 B / 2 ranks = 32,194,560 B at any context;
  //   KV: 10 attention layers x (1 of 2 KV heads x 2 x 256 x 2 B = 1,024 B) per token.
  const ModelSpec m = Model("qwen3.5-35b-a3b");
  for (int64_t context : {1024, 131'072}) {
    const MemoryPerGpu mem = Estimate(m, "dgx-h100", "tp2", context).memory;
    EXPECT_DOUBLE_EQ(mem.state_bytes_per_sequence, 32'194'560) << context;
    EXPECT_DOUBLE_EQ(mem.kv_bytes_per_sequence,
                     32'194'560 + 10.0 * 1024 * static_cast<double>(context))
        << context;
  }
}

TEST(SlidingWindowLayers, KvCapacityCountsOnlyTheLayersThatGrow) {
  // gpt-oss-120b on one H100, fp8 KV: 36 layers alternate a 128-token sliding window and full
  // attention; 8 KV heads x 64 dims x (K and V) x 1 B = 1,024 B per token and layer.
  //   KV per token of context: the 18 full layers, 18 x 1,024 = 18,432 B;
  //   the 18 windowed layers hold at most 128 tokens: 18 x 128 x 1,024 = 2,359,296 B per
  //   sequence, i.e. 128 tokens of the full layers' KV, fixed like a recurrent state.
  // So a sequence at 4,096 tokens takes 4,096 + 128 tokens of the capacity (not 2 x 4,096), and
  // the capacity holds as many such sequences as the byte budget does.
  // Weights in the checkpoint's MXFP4 (116.8e9 x 0.53 B = 62 GB) leave room for the KV.
  PerfOptions o;
  o.weight_dtype = Dtype::kMxfp4;
  o.kv_dtype = Dtype::kFp8;
  const MemoryPerGpu mem = Estimate(Model("gpt-oss-120b"), "dgx-h100", "tp1", 4096, o).memory;
  EXPECT_DOUBLE_EQ(mem.kv_bytes_per_token, 18'432);
  EXPECT_DOUBLE_EQ(mem.state_bytes_per_sequence, 2'359'296);
  EXPECT_DOUBLE_EQ(mem.state_tokens_per_sequence, 128);
  EXPECT_DOUBLE_EQ(mem.kv_bytes_per_sequence, 18.0 * 4096 * 1024 + 2'359'296);
  ASSERT_GT(mem.max_sequences, 10);
  // The byte budget also keeps one fp32 logits row per sequence (201,088 x 4 B, 1% of it).
  EXPECT_NEAR(mem.kv_capacity_tokens / (4096 + 128) / static_cast<double>(mem.max_sequences), 1.0,
              0.02);
}

TEST(RecurrentLayers, DecodeCostGrowsOnlyInTheAttentionLayers) {
  // Qwen3.5-35B-A3B, tp1, one sequence: from 1,024 to 131,072 tokens of context the decode
  // FLOPs grow only by the 10 attention layers' QK^T and AV: 2 x 16 heads x (256 + 256) per key
  // and layer -> 10 x 16,384 x 130,048. The 30 recurrent layers cost the same at both lengths.
  const ModelSpec m = Model("qwen3.5-35b-a3b");
  const StepEstimate short_context = Estimate(m, "dgx-h100", "tp1", 1024);
  const StepEstimate long_context = Estimate(m, "dgx-h100", "tp1", 131'072);
  EXPECT_DOUBLE_EQ(long_context.decode.flops - short_context.decode.flops, 10.0 * 16'384 * 130'048);
}

TEST(RecurrentLayers, CoreReadsAndWritesTheStateOncePerStep) {
  // RecurrentCore for 4 decoding sequences of Qwen3.5-35B, tp1: 4 tokens x 3,735,552 FLOPs
  // (7 x 32 x 128 x 128 state + 2 x 8,192 x 4 conv); bytes 2 x 4 x 2,146,304 (state read and
  // written). Prefill of one 1,024-token prompt: 16 chunks of 64 -> 2 x 16 x 2,146,304 bytes.
  const ModelSpec m = Model("qwen3.5-35b-a3b");
  const ModelShard s = ShardModel(m, ParseLayout("tp1").value(), {});
  const ClusterSpec c = LoadCluster("dgx-h100").value();
  const OpCoster ops(c.gpu, {});
  PhaseBreakdown decode;
  RecurrentCore(ops, s, 4, 4, false, decode);
  EXPECT_DOUBLE_EQ(decode.flops, 4 * 3'735'552.0);
  EXPECT_DOUBLE_EQ(decode.hbm_bytes, 2 * 4 * 2'146'304.0);
  PhaseBreakdown prefill;
  RecurrentCore(ops, s, 1024, 1, true, prefill);
  EXPECT_DOUBLE_EQ(prefill.hbm_bytes, 2 * 16 * 2'146'304.0);
  // Intra-chunk attention: 32 heads x 65 x (128 + 128) = 532,480 more FLOPs per token.
  EXPECT_DOUBLE_EQ(prefill.flops, 1024 * (3'735'552.0 + 532'480.0));
}

TEST(SparseAttention, CoreIsBoundedByTopKAt128k) {
  // DeepSeek-V3.2, tp8, one decoding sequence at 131,072 tokens, one layer on one GPU:
  //   indexer: 131,072 keys x 2 x 64 x (128 + 1) = 16,512 FLOPs each; reads 131,072 x 128 x 2 B
  //   core, in MLA's absorbed form (decode): min(131,072, 2,048) keys x 2 x (128 / 8 heads) x
  //         (512 + 64 + 512) = 34,816 FLOPs each; reads 2,048 x (512 + 64) x 2 B of latent.
  const ModelSpec m = Model("deepseek-v3.2");
  const ModelShard s = ShardModel(m, ParseLayout("tp8").value(), {});
  const OpCoster ops(LoadCluster("dgx-b300").value().gpu, {});
  PhaseBreakdown out;
  SparseAttentionCore(ops, s, 2048, 131'072, 2048, 131'072, 1, /*prefill=*/false, out);
  EXPECT_DOUBLE_EQ(out.flops, 131'072.0 * 16'512 + 2048.0 * 34'816);
  EXPECT_DOUBLE_EQ(out.hbm_bytes, 131'072.0 * 256 + 2048.0 * 1152);
}

TEST(SparseAttention, StepGrowsOnlyByTheIndexerBeyondTopK) {
  // From 65,536 to 131,072 tokens of context, one sequence, DeepSeek-V3.2 (fp8 on 8 B300s, tp8):
  // the core stays at 2,048 keys; only the indexer grows, by 61 layers x 65,536 keys x 16,512
  // FLOPs and 61 x 65,536 x 128 B of fp8 index keys. DeepSeek-V3 (dense MLA) instead grows by
  // 61 x 65,536 x 34,816 FLOPs of core attention (MLA's absorbed form).
  PerfOptions fp8;
  fp8.weight_dtype = fp8.kv_dtype = Dtype::kFp8;
  const ModelSpec v32 = Model("deepseek-v3.2");
  const StepEstimate a = Estimate(v32, "dgx-b300", "tp8", 65'536, fp8);
  const StepEstimate b = Estimate(v32, "dgx-b300", "tp8", 131'072, fp8);
  EXPECT_DOUBLE_EQ(b.decode.flops - a.decode.flops, 61.0 * 65'536 * 16'512);
  EXPECT_DOUBLE_EQ(b.decode.hbm_bytes - a.decode.hbm_bytes, 61.0 * 65'536 * 128);
  const ModelSpec v3 = Model("deepseek-v3");
  const StepEstimate c = Estimate(v3, "dgx-b300", "tp8", 65'536, fp8);
  const StepEstimate d = Estimate(v3, "dgx-b300", "tp8", 131'072, fp8);
  EXPECT_DOUBLE_EQ(d.decode.flops - c.decode.flops, 61.0 * 65'536 * 34'816);
}

TEST(MlaAttention, AbsorbedInDecodeUnabsorbedInPrefill) {
  // DeepSeek-V3 (128 heads, qk_nope 128, qk_rope 64, v 128, kv_lora_rank 512), tp1, one key
  // of one layer (DeepSeek-V2 Technical Report, 2.1.2, for the absorbed form):
  //   prefill, unabsorbed: 2 x 128 x (128 + 64 + 128) =  81,920 FLOPs
  //   decode, absorbed:    2 x 128 x (512 + 64 + 512) = 278,528 FLOPs
  // Both read the same cached latent: (512 + 64) x 2 B per token in bf16.
  const ModelShard s = ShardModel(Model("deepseek-v3"), ParseLayout("tp1").value(), {});
  EXPECT_DOUBLE_EQ(AttentionFlopsPerKey(s, /*prefill=*/true), 81'920.0);
  EXPECT_DOUBLE_EQ(AttentionFlopsPerKey(s, /*prefill=*/false), 278'528.0);
  EXPECT_DOUBLE_EQ(s.kv_bytes_per_token, 576.0 * 2);
  // A model without MLA has one form: llama-3.1-8b, 32 heads of 128: 2 x 32 x (128 + 128).
  const ModelShard dense = ShardModel(Model("llama-3.1-8b"), ParseLayout("tp1").value(), {});
  EXPECT_DOUBLE_EQ(AttentionFlopsPerKey(dense, true), 16'384.0);
  EXPECT_DOUBLE_EQ(AttentionFlopsPerKey(dense, false), 16'384.0);
}

}  // namespace
}  // namespace shardwise
