// Rooflines and critical batch sizes against The Math Behind LLM Pricing 05, How to Think About
// GPUs.
#include "shardwise/perf/roofline.h"

#include <gtest/gtest.h>

#include "shardwise/model/catalog.h"

namespace shardwise {
namespace {

Roofline Compute(const std::string& model, Dtype dtype = Dtype::kBf16) {
  return ComputeRoofline(LoadModel(model).value(), LoadGpu("h100-sxm").value(), dtype, Dtype::kBf16,
                         0, 8);
}

TEST(Roofline, DenseSweetSpotIsAbout300) {
  // The Math Behind LLM Pricing 05: the decode sweet spot is B ~ 300 x inverse sparsity; for a
  // dense bf16 model on an H100 the ridge is 0.840 x 989.4 / (0.866 x 3.35) = 286 FLOPs/byte and 2
  // bytes per parameter cancel the 2 FLOPs per parameter: B ~ 286.
  const Roofline r = Compute("llama-3.1-70b");
  EXPECT_NEAR(r.sweet_spot_batch, 286, 5);
  EXPECT_GE(r.compute_bound_batch, 256);
  EXPECT_LE(r.compute_bound_batch, 512);
}

TEST(Roofline, MoeSweetSpotScalesWithInverseSparsity) {
  // The sweet spot scales with total / active (matmul) parameters: DeepSeek-V3 671.03 / 36.63
  // against Llama-3.1-70B 70.554 / 69.503 (its embedding is not multiplied): 18.05x.
  const Roofline dense = Compute("llama-3.1-70b");
  const Roofline moe = Compute("deepseek-v3");
  EXPECT_NEAR(moe.sweet_spot_batch / dense.sweet_spot_batch, (671.03 / 36.63) / (70.554 / 69.503),
              0.05);
}

TEST(CriticalSizes, Seed004DataParallel) {
  // How to Think About GPUs: DP/FSDP needs a per-GPU batch > 990e12 / 450e9 = 2,200 tokens inside a
  // node and > 990e12 / 400e9 = 2,475 across nodes (H100 bf16). Our peak is 989.4 TFLOP/s.
  const Roofline r = Compute("llama-3.1-70b");
  EXPECT_NEAR(r.intra_node.dp_tokens_per_gpu, 989.4e12 / 450e9, 1);
  EXPECT_NEAR(r.inter_node.dp_tokens_per_gpu, 989.4e12 / 400e9, 1);
  // How to Think About GPUs, for gpt-oss (k = 4 of E = 128): 32 x 2,475 = 79,200 across nodes.
  EXPECT_NEAR(Compute("gpt-oss-120b").inter_node.dp_tokens_per_gpu, 32 * 989.4e12 / 400e9, 32);
}

TEST(CriticalSizes, Seed004TensorParallel) {
  // How to Think About GPUs: TP stays compute-bound while Y < F W / C; LLaMA-3 70B (F = 28,672)
  // gets about 11-way across nodes (28,672 x 400e9 / 989.4e12 = 11.6) and 13-way inside (450 GB/s).
  const Roofline r = Compute("llama-3.1-70b");
  EXPECT_NEAR(r.inter_node.max_tp, 28672 * 400e9 / 989.4e12, 0.01);
  EXPECT_NEAR(r.intra_node.max_tp, 28672 * 450e9 / 989.4e12, 0.01);
}

TEST(CriticalSizes, ExpertParallelNeedsWideExpertsAcrossNodes) {
  // EP over Z = 8: compute-bound while F > (2/3)(7/8) C / W. Across nodes each GPU has its own
  // 50 GB/s NIC: (2/3)(7/8) x 989.4e12 / 50e9 = 11,543 > DeepSeek's 2,048 (How to Think About GPUs:
  // DeepSeek has small F and restricts cross-node EP); inside a node 1,283 < 2,048.
  const Roofline r = Compute("deepseek-v3");
  EXPECT_NEAR(r.inter_node.ep_min_expert_ffn, 2.0 / 3 * 7.0 / 8 * 989.4e12 / 50e9, 1);
  EXPECT_GT(r.inter_node.ep_min_expert_ffn, 2048);
  EXPECT_LT(r.intra_node.ep_min_expert_ffn, 2048);
}

}  // namespace
}  // namespace shardwise
