// Sizing by the Parallelism guide's rule, checked against the seed's worked example and hand
// calculations.
#include "shardwise/plan/sizing.h"

#include <gtest/gtest.h>

#include "shardwise/model/catalog.h"

namespace shardwise {
namespace {

TEST(Sizing, Seed001DeepseekOnB200) {
  // the Parallelism guide: 1 byte x 671B x 1.8 = ~1,208 GB; 4 x 180 GB = 720 GB is too small, so a
  // full node of 8 B200 (1,440 GB) is the minimum.
  SizingRequest req;
  req.weight_dtype = Dtype::kFp8;
  req.kv_allowance = 1.8;
  auto r = SizeDeployment(*LoadModel("deepseek-v3"), *LoadGpu("b200"), req);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->gpus, 8);
  EXPECT_EQ(r->nodes, 1);
  EXPECT_NEAR(r->required_bytes / 1e9, 1.8 * 671.0, 1.8 * 0.5);
  ASSERT_EQ(r->ladder.size(), 4u);  // 1, 2, 4, 8
  EXPECT_FALSE(r->ladder[2].fits);
}

TEST(Sizing, BeyondOneNodeRoundsToWholeNodes) {
  // Llama-3.1-405B bf16: 811.7 GB x 1.8 = 1,461 GB; 8 x 80 GB = 640 GB, 16 x 80 = 1,280 GB,
  // 24 x 80 = 1,920 GB -> 24 H100s in 3 nodes.
  SizingRequest req;
  req.kv_allowance = 1.8;
  auto r = SizeDeployment(*LoadModel("llama-3.1-405b"), *LoadGpu("h100-sxm"), req);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->gpus, 24);
  EXPECT_EQ(r->nodes, 3);
}

TEST(Sizing, ExactKvFromContextAndConcurrency) {
  // Llama-3.1-70B bf16: weights 141.1 GB; KV 327,680 B/token x 8,192 tokens x 32 sequences
  // = 85.9 GB; total 227.0 GB -> 4 x 80 GB (320 GB).
  SizingRequest req;
  req.context_tokens = 8192;
  req.concurrency = 32;
  auto r = SizeDeployment(*LoadModel("llama-3.1-70b"), *LoadGpu("h100-sxm"), req);
  ASSERT_TRUE(r.ok());
  EXPECT_DOUBLE_EQ(r->kv_bytes, 327'680.0 * 8192 * 32);
  EXPECT_EQ(r->gpus, 4);
}

TEST(SizingErrors, NeedsAllowanceOrContext) {
  SizingRequest req;
  auto r = SizeDeployment(*LoadModel("llama-3.1-8b"), *LoadGpu("h100-sxm"), req);
  ASSERT_FALSE(r.ok());
  // The library names fields in backticks; the CLI turns them into flags (cli/flags.h).
  EXPECT_EQ(r.status().message(),
            "give either `kv_alloc` X, or both `context` N and `concurrency` C");
  EXPECT_EQ(r.status().field(), "kv_alloc");
}

TEST(SizingErrors, AbsurdAllowance) {
  SizingRequest req;
  req.kv_allowance = 0.5;
  auto r = SizeDeployment(*LoadModel("llama-3.1-8b"), *LoadGpu("h100-sxm"), req);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("`kv_alloc` must be between 1"), std::string::npos);
}

TEST(SizingErrors, AbsurdConcurrency) {
  SizingRequest req;
  req.context_tokens = 1'000'000;
  req.concurrency = 100'000'000;
  auto r = SizeDeployment(*LoadModel("llama-3.1-405b"), *LoadGpu("h100-sxm"), req);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("reduce `context` or `concurrency`"), std::string::npos)
      << r.status().message();
}

}  // namespace
}  // namespace shardwise
