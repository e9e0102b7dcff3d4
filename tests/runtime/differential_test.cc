// The backbone: every layout of up to 8 ranks built from tp in {1,2,3,4}, pp in {1,2,4},
// ep in {1,2,4} (MoE), dp in {1,2} and cp in {1,2,4} that the model's heads, experts and layers
// allow must give the single-rank reference's logits (max relative error <= 1e-4) and the same
// greedy tokens, on the threads backend. The 16-token prompts split into 2 x cp chunks for
// every cp, and the 5 decode steps put new keys on every CP rank. tiny-dense has 12 query and 2 KV
// heads, so tp 3 (not a power of two) and tp 3 or 4 (more than the KV heads) are both exercised.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "run_layout.h"
#include "shardwise/model/catalog.h"
#include "shardwise/runtime/comm/thread_comm.h"
#include "shardwise/runtime/forward/stage_forward.h"
#include "shardwise/runtime/runner.h"
#include "test_layouts.h"

namespace shardwise {
namespace {

using testing::MaxRelativeError;
using testing::RunLayout;

// Every layout, or every N-th with SHARDWISE_LAYOUT_STRIDE=N: CI's sanitizer stage (.ci/run)
// looks for memory errors rather than numerics and runs every third, after its first stage ran
// them all unsanitized.
size_t LayoutStride() {
  const char* text = std::getenv("SHARDWISE_LAYOUT_STRIDE");
  const int stride = text != nullptr ? std::atoi(text) : 1;
  return stride > 1 ? static_cast<size_t>(stride) : 1;
}

void ExpectAllLayoutsMatch(const std::string& model, size_t min_layouts) {
  RunConfig c;
  c.model = LoadModel(model).value();
  c.batch = 4;
  c.prompt_tokens = 16;
  c.generate_tokens = 6;
  c.seed = 5;
  const RunResult ref = RunLayout(c);
  ASSERT_EQ(ref.tokens.size(), 4u);
  const std::vector<Layout> layouts = testing::DifferentialLayouts(c.model, {1, 2, 4});
  EXPECT_GE(layouts.size(), min_layouts);
  ::testing::Test::RecordProperty("layouts", static_cast<int>(layouts.size()));
  for (size_t i = 0; i < layouts.size(); i += LayoutStride()) {
    const Layout& l = layouts[i];
    RunConfig sharded = c;
    sharded.layout = l;
    const RunResult got = RunLayout(sharded);
    ASSERT_EQ(got.logits.size(), ref.logits.size()) << l.ToString();
    EXPECT_LE(MaxRelativeError(ref.logits, got.logits), 1e-4) << l.ToString();
    EXPECT_EQ(got.tokens, ref.tokens) << l.ToString();
  }
}

TEST(Differential, TinyDenseEveryLayout) { ExpectAllLayoutsMatch("tiny-dense", 15); }

TEST(Differential, TinyMoeEveryLayout) { ExpectAllLayoutsMatch("tiny-moe", 25); }

// MLA (prefill expanded, decode absorbed) with DeepSeek-V3 routing, dense first layer and a
// shared expert: 8 heads, so tp in {1, 2, 4}.
TEST(Differential, TinyMlaEveryLayout) { ExpectAllLayoutsMatch("tiny-mla", 20); }

// gpt-oss: sliding-window and full layers, sinks, biased router and experts, clamped SwiGLU.
TEST(Differential, TinyGptOssEveryLayout) { ExpectAllLayoutsMatch("tiny-gptoss", 20); }

// Architecture variants on the tiny shapes: Qwen3 (per-head Q/K RMSNorm, no biases) and
// Mixtral (block_sparse_moe tensor names, always-renormalised top-k, no shared expert).
void ExpectVariantMatches(ModelSpec m, const std::vector<std::string>& layouts) {
  RunConfig c;
  c.model = std::move(m);
  c.batch = 4;
  c.prompt_tokens = 10;
  c.generate_tokens = 5;
  const RunResult ref = RunLayout(c);
  for (const std::string& text : layouts) {
    RunConfig sharded = c;
    sharded.layout = ParseLayout(text).value();
    const RunResult got = RunLayout(sharded);
    EXPECT_LE(MaxRelativeError(ref.logits, got.logits), 1e-4)
        << c.model.architecture << " " << text;
    EXPECT_EQ(got.tokens, ref.tokens) << c.model.architecture << " " << text;
  }
}

TEST(Differential, Qwen3QkNorm) {
  ModelSpec m = LoadModel("tiny-dense").value();
  m.architecture = "Qwen3ForCausalLM";
  m.qk_norm = QkNorm::kPerHead;
  ExpectVariantMatches(m, {"tp2", "tp3pp2", "tp4"});
}

TEST(Differential, MixtralNamesAndRouting) {
  ModelSpec m = LoadModel("tiny-moe").value();
  m.architecture = "MixtralForCausalLM";
  m.qkv_bias = false;
  m.moe.num_shared_experts = 0;
  m.moe.shared_expert_gate = false;
  m.norm_topk_prob = true;
  ExpectVariantMatches(m, {"tp2ep2", "ep4", "tp4", "tp2pp2ep2"});
}

TEST(Differential, TpAboveKvHeadsAndNotAPowerOfTwo) {
  // The layouts the issue requires to exist: tp 3 (12 heads / 3 = 4 per rank, the middle rank
  // needs both KV heads) and tp 4 (3 heads per rank inside one KV group).
  const ModelSpec m = LoadModel("tiny-dense").value();
  EXPECT_TRUE(CheckRuntimeSupport(m, Layout{1, 3, 1, 1, 1}).ok());
  EXPECT_TRUE(CheckRuntimeSupport(m, Layout{1, 4, 1, 1, 1}).ok());
  EXPECT_GT(3, m.num_kv_heads);
}

// Redundant experts (a replica holds the same weights, so the output must not change) and a
// capacity factor (drops are decided per sequence in position order, so the unsharded run with
// the same factor drops the same pairs): every layout equals the unsharded run with its factor,
// counts the same routed and dropped pairs, and the factor really drops and changes logits.
TEST(Differential, RedundantExpertsAndCapacity) {
  struct Case {
    const char* model;
    const char* layout;
    int64_t redundant;
    double capacity;
  };
  const std::vector<Case> cases = {{"tiny-moe", "ep2", 2, 0},
                                   {"tiny-moe", "tp2ep4", 4, 0},
                                   {"tiny-moe", "dp2tp2ep4", 8, 1.0},
                                   {"tiny-moe", "cp2ep4", 4, 1.0},
                                   {"tiny-moe", "tp2cp2pp2ep2", 2, 0.75},
                                   {"tiny-moe", "ep4", 12, 1.0},
                                   {"tiny-mla", "ep2", 2, 1.0},
                                   {"tiny-gptoss", "tp2ep2", 2, 1.0},
                                   {"tiny-mla", "cp2ep4", 4, 0.75}};
  for (const Case& k : cases) {
    RunConfig c;
    c.model = LoadModel(k.model).value();
    c.batch = 4;
    c.prompt_tokens = 16;
    c.generate_tokens = 5;
    c.capacity_factor = k.capacity;
    const RunResult ref = RunLayout(c);
    RunConfig sharded = c;
    sharded.layout = ParseLayout(k.layout).value();
    sharded.redundant_experts = k.redundant;
    const RunResult got = RunLayout(sharded);
    const std::string what =
        fmt::format("{} {} +{} experts, capacity {}", k.model, k.layout, k.redundant, k.capacity);
    EXPECT_LE(MaxRelativeError(ref.logits, got.logits), 1e-4) << what;
    EXPECT_EQ(got.tokens, ref.tokens) << what;
    EXPECT_EQ(got.routed_pairs, ref.routed_pairs) << what;
    EXPECT_EQ(got.dropped_pairs, ref.dropped_pairs) << what;
    if (k.capacity > 0) {
      EXPECT_GT(got.dropped_pairs, 0) << what;
      RunConfig unlimited = c;
      unlimited.capacity_factor = 0;
      EXPECT_GT(MaxRelativeError(RunLayout(unlimited).logits, got.logits), 1e-3) << what;
    } else {
      EXPECT_EQ(got.dropped_pairs, 0) << what;
    }
  }
}

// More micro-batches than stages (the pipeline's "train" keeps every stage busy): the same
// tokens and logits as the unsharded run.
TEST(Differential, MicroBatchedPipeline) {
  RunConfig c;
  c.model = LoadModel("tiny-moe").value();
  c.batch = 4;
  c.prompt_tokens = 8;
  c.generate_tokens = 4;
  const RunResult ref = RunLayout(c);
  for (const char* layout : {"pp2", "pp4", "tp2pp2ep2"}) {
    for (int64_t micro : {1, 3, 4}) {
      RunConfig sharded = c;
      sharded.layout = ParseLayout(layout).value();
      sharded.micro_batches = micro;
      const RunResult got = RunLayout(sharded);
      EXPECT_EQ(got.micro_batches, micro);
      EXPECT_LE(MaxRelativeError(ref.logits, got.logits), 1e-4) << layout << " x" << micro;
      EXPECT_EQ(got.tokens, ref.tokens) << layout << " x" << micro;
      EXPECT_GE(got.prefill.bubble, 0.0);
      EXPECT_LT(got.prefill.bubble, 1.0);
    }
  }
}

TEST(Differential, ContextParallelLayoutsAreCovered) {
  // The backbone above includes CP alone, with TP, PP, DP and with EP spanning the CP ranks.
  auto has = [](const ModelSpec& m, const std::string& text) {
    const std::vector<Layout> all = testing::DifferentialLayouts(m, {1, 2, 4});
    return std::find(all.begin(), all.end(), ParseLayout(text).value()) != all.end();
  };
  const ModelSpec dense = LoadModel("tiny-dense").value(), moe = LoadModel("tiny-moe").value();
  for (const char* l : {"cp2", "cp4", "tp3cp2", "tp2cp2pp2", "dp2cp2pp2", "tp2cp4"}) {
    EXPECT_TRUE(has(dense, l)) << l;
  }
  for (const char* l : {"cp2ep2", "tp2cp2ep4", "cp4ep4", "dp2cp2ep4", "cp2pp2ep2", "cp2ep4"}) {
    EXPECT_TRUE(has(moe, l)) << l;
  }
}

TEST(Differential, ExpertsNeedEpToDivideThem) {
  const ModelSpec m = LoadModel("tiny-moe").value();  // 8 experts
  EXPECT_FALSE(CheckRuntimeSupport(m, ParseLayout("tp3ep3").value()).ok());
}

}  // namespace
}  // namespace shardwise
