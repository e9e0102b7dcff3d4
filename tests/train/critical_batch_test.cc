// The worked numbers of "How to Think About GPUs" (How To Scale Your Model, LLM rooflines):
// the critical per-GPU batch for DP/FSDP, the LLaMA-3 and DeepSeek-V3 batch arithmetic, and the
// largest compute-bound TP degree for LLaMA-3-70B, as the training planner reports them.
#include <gtest/gtest.h>

#include "shardwise/model/catalog.h"
#include "shardwise/train/planner.h"

namespace shardwise::train {
namespace {

// An estimate with the given layout and batch: what ComputeCriticalBatch reads from it.
TrainEstimate WithLayout(Layout l, int64_t seq_len, int64_t global_batch) {
  TrainEstimate e;
  e.layout = l;
  e.config.seq_len = seq_len;
  e.config.global_batch = global_batch;
  return e;
}

ClusterSpec H100Gpus(int64_t gpus) {
  return WithNodes(LoadCluster("dgx-h100").value(), gpus / 8).value();
}

TEST(CriticalBatch, About2500TokensPerGpuOnH100) {
  // "within a node ... 990e12 / 450e9 = 2200; within an SU or at the spine 990e12 / 400e9 =
  // 2475": about 2,500 tokens per GPU (our bf16 peak is 989.4 TFLOP/s).
  const ModelSpec m = LoadModel("llama-3.1-70b").value();
  Layout l;
  l.dp = 16;
  const CriticalBatch c = ComputeCriticalBatch(m, H100Gpus(16), WithLayout(l, 4096, 64));
  EXPECT_NEAR(c.tokens_per_gpu_intra, 2200, 0.01 * 2200);
  EXPECT_NEAR(c.tokens_per_gpu_inter, 2475, 0.01 * 2475);
}

TEST(CriticalBatch, Llama3On16kH100) {
  // "LLaMA-3, which trained on 16000 H100s would need a batch size of at least 40M tokens (for
  // reference, they used 16M)": 16,384 x 2,475 = 40.5M for pure DP. With its TP8 PP16 DP128
  // layout only the 128 data-parallel ranks need 2,475 tokens each: 317K, far below 16M, so the
  // 16-way PP "reduces the cost of the data parallel AllReduce by 16x".
  const ModelSpec m = LoadModel("llama-3.1-405b").value();
  Layout l;
  l.tp = 8;
  l.pp = 16;
  l.dp = 128;
  const CriticalBatch c =
      ComputeCriticalBatch(m, H100Gpus(16384), WithLayout(l, 8192, 16'000'000 / 8192));
  EXPECT_NEAR(c.pure_dp_tokens / 1e6, 40.5, 0.5);
  EXPECT_GT(c.pure_dp_tokens, c.batch_tokens);  // pure DP would be communication-bound
  EXPECT_NEAR(c.layout_tokens, 128 * 2475, 0.01 * 128 * 2475);
  EXPECT_LT(c.layout_tokens, c.batch_tokens);  // the real layout is compute-bound
}

TEST(CriticalBatch, DeepSeekV3On2048H800) {
  // "DeepSeek v3 trained on 2048 H800 GPUs ... would need 990e12 / 300e9 = 3300 tokens per GPU,
  // or about 6.7M (in practice, they used 4M)"; its steady-state batch 4096 x 15360 = 62.9M
  // tokens is "30k tokens per GPU". The text's arithmetic, with its 300 GB/s:
  EXPECT_NEAR(990e12 / 300e9 * 2048 / 1e6, 6.76, 0.01);
  EXPECT_NEAR(4096.0 * 15360 / 2048, 30720, 1);
  // Our H800 catalog gives each GPU a 50 GB/s NIC (400 GB/s per node) and 200 GB/s NVLink, so
  // the planner's figure across nodes is 989.4e12 / 400e9 = 2,474 per dense rank (x E/k = 32 for
  // DeepSeek's sparsity). With its PP16 EP64 ZeRO-1 DP2 layout (dp = 2048 / 16 = 128 ranks per
  // stage, EP inside them) the layout's DP ranks need far less than the 62.9M batch.
  const ModelSpec m = LoadModel("deepseek-v3").value();
  const ClusterSpec c = WithNodes(LoadCluster("hgx-h800").value(), 256).value();
  Layout l;
  l.pp = 16;
  l.dp = 128;
  l.ep = 64;
  const CriticalBatch cb = ComputeCriticalBatch(m, c, WithLayout(l, 4096, 15360));
  EXPECT_NEAR(cb.tokens_per_gpu_inter, 989.4e12 / 400e9 * 32, 1);
  EXPECT_LT(cb.layout_tokens, cb.batch_tokens);
}

TEST(CriticalBatch, MaxTensorParallelForLlama3_70B) {
  // "For F = 28,672 like LLaMA-3, this is about 11-way TP (or rounding down, about 8-way, which
  // is how large a node is)": F W / C = 28,672 x 400e9 / 989.4e12 = 11.6 across nodes.
  const ModelSpec m = LoadModel("llama-3.1-70b").value();
  Layout l;
  l.tp = 8;
  l.dp = 2;
  const CriticalBatch c = ComputeCriticalBatch(m, H100Gpus(16), WithLayout(l, 4096, 64));
  EXPECT_GE(c.max_tp_inter, 11);
  EXPECT_LT(c.max_tp_inter, 12);
  EXPECT_GE(c.max_tp_intra, 8);
}

}  // namespace
}  // namespace shardwise::train
