// Layout syntax and validity against model shapes.
#include "shardwise/layout/layout.h"

#include <gtest/gtest.h>

#include "shardwise/model/catalog.h"

namespace shardwise {
namespace {

Layout Parse(const std::string& text) {
  auto l = ParseLayout(text);
  EXPECT_TRUE(l.ok()) << text << ": " << l.status().message();
  return l.ok() ? l.value() : Layout{};
}

TEST(LayoutParse, EngineerSyntax) {
  const Layout a = Parse("tp8pp2");
  EXPECT_EQ(a.tp, 8);
  EXPECT_EQ(a.pp, 2);
  EXPECT_EQ(a.gpus(), 16);
  EXPECT_EQ(Parse("TP4EP8DP2").gpus(), 8);
  const Layout c = Parse("dp2tp4cp2");
  EXPECT_EQ(c.gpus(), 16);
  EXPECT_EQ(c.CpStride(), 4);
  EXPECT_EQ(c.DpStride(), 8);
}

TEST(LayoutParse, Ep16IsDp16Ep16) {
  // DESIGN.md: "ep16 alone is shorthand for dp16ep16" (the Parallelism guide's EP16 across two
  // nodes).
  const Layout l = Parse("ep16");
  EXPECT_EQ(l.dp, 16);
  EXPECT_EQ(l.ep, 16);
  EXPECT_EQ(l.gpus(), 16);
  EXPECT_EQ(l.AttentionDp(), 16);
  EXPECT_EQ(l.Replicas(), 1);
  EXPECT_EQ(l.ToString(), "dp16ep16");
}

TEST(LayoutParse, ExpertTpWhenEpBelowTp) {
  // tp8ep2: two expert groups of 4 ranks each split every expert's FFN 4 ways.
  const Layout l = Parse("tp8ep2");
  EXPECT_EQ(l.ExpertTp(), 4);
  EXPECT_EQ(l.EpStride(), 4);
  EXPECT_EQ(l.AttentionDp(), 1);
}

TEST(LayoutParse, WideEpSpansDataParallelRanks) {
  // DeepSeek's prefill deployment dp8tp4ep32: 8 attention-DP ranks of TP4 share 32-way EP.
  const Layout l = Parse("dp8tp4ep32");
  EXPECT_EQ(l.AttentionDp(), 8);
  EXPECT_EQ(l.InstanceGpus(), 32);
  EXPECT_EQ(l.ExpertTp(), 1);
}

TEST(LayoutParse, ExpertTpOverAttentionDp) {
  // 8 GPUs as attention DP 8 whose expert group holds each expert split over 2 ranks:
  // ep4 x etp2 = 8 ranks (TensorRT-LLM enable_attention_dp with moe_tensor_parallel_size 2).
  const Layout l = Parse("dp8ep4etp2");
  EXPECT_EQ(l.gpus(), 8);
  EXPECT_EQ(l.AttentionDp(), 8);
  EXPECT_EQ(l.ExpertTp(), 2);
  EXPECT_EQ(l.EpStride(), 2);  // EP groups {0, 2, 4, 6} and {1, 3, 5, 7}
  EXPECT_EQ(l.Replicas(), 1);
  EXPECT_TRUE(l.GathersTokensForExperts());
  EXPECT_EQ(l.ToString(), "dp8ep4etp2");
  EXPECT_EQ(Parse("ep4etp2"), l);  // dp follows the expert group, as ep16 is dp16ep16
  // With attention TP 2: 4 attention-DP ranks of TP 2 share ep2 x etp4.
  const Layout t = Parse("tp2ep2etp4");
  EXPECT_EQ(t.dp, 4);
  EXPECT_EQ(t.AttentionDp(), 4);
  EXPECT_EQ(t.ExpertTp(), 4);
  // Two replicas of the 8-GPU group.
  EXPECT_EQ(Parse("dp16ep4etp2").Replicas(), 2);
  // An etp that equals the one tp and ep give is that layout: tp8ep4 splits experts 2 ways.
  const Layout same = Parse("tp8ep4etp2");
  EXPECT_EQ(same, Parse("tp8ep4"));
  EXPECT_FALSE(same.GathersTokensForExperts());
  EXPECT_EQ(same.ToString(), "tp8ep4");
}

TEST(LayoutParseErrors, OneLineWithTheFix) {
  // An expert group smaller than the attention group, or larger than a stage.
  EXPECT_NE(ParseLayout("tp4ep1etp2").status().message().find("multiple of tp x cp (4)"),
            std::string::npos);
  EXPECT_NE(ParseLayout("dp4ep4etp2").status().message().find("ep x etp (8) must divide"),
            std::string::npos);
  EXPECT_NE(ParseLayout("ep4etp0").status().message().find("at least 1"), std::string::npos);
  EXPECT_FALSE(ParseLayout("").ok());
  EXPECT_NE(ParseLayout("tp8xx2").status().message().find("unknown degree 'xx'"),
            std::string::npos);
  EXPECT_NE(ParseLayout("tp").status().message().find("needs a degree"), std::string::npos);
  // A word that names no degree is named whole, not as a degree missing after its first letters.
  EXPECT_EQ(ParseLayout("foo").status().message(),
            "layout 'foo': unknown degree 'foo'; use dp, tp, pp, ep, cp, etp");
  EXPECT_EQ(ParseLayout("tp2bar4").status().message(),
            "layout 'tp2bar4': unknown degree 'bar'; use dp, tp, pp, ep, cp, etp");
  EXPECT_NE(ParseLayout("tp2tp4").status().message().find("appears twice"), std::string::npos);
  EXPECT_NE(ParseLayout("tp0").status().message().find("at least 1"), std::string::npos);
  EXPECT_NE(ParseLayout("tp4ep3").status().message().find("must divide dp x tp x cp"),
            std::string::npos);
  // dp2tp3ep2: 6 stage ranks divide by ep 2, but the 3 TP ranks cannot split an expert in
  // halves (3 / 2 ranks per expert).
  EXPECT_NE(ParseLayout("dp2tp3ep2").status().message().find("below tp x cp (3) must divide it"),
            std::string::npos);
}

// Layouts built in code skip ParseLayout; ValidateLayout refuses the same groupings rather than
// truncating tp x cp / ep (which gave an expert slot past the placement's end in the runtime).
TEST(LayoutValidate, ExpertGroupsMustBeWholeOrEvenTpGroups) {
  const ModelSpec moe = LoadModel("tiny-moe").value();
  EXPECT_NE(ValidateLayout(Layout{.dp = 2, .tp = 3, .ep = 2}, moe)
                .message()
                .find("ep (2) must divide tp x cp (3)"),
            std::string::npos);
  EXPECT_NE(
      ValidateLayout(Layout{.dp = 1, .tp = 1, .ep = 2}, moe).message().find("divides dp x tp x cp"),
      std::string::npos);
  EXPECT_TRUE(ValidateLayout(Layout{.dp = 2, .tp = 4, .ep = 2}, moe).ok());
  EXPECT_TRUE(ValidateLayout(Layout{.dp = 2, .tp = 1, .ep = 2}, moe).ok());
}

TEST(LayoutValidate, AgainstModelShapes) {
  const ModelSpec llama = LoadModel("llama-3.1-70b").value();  // 64 heads, 8 KV heads
  EXPECT_TRUE(ValidateLayout(Parse("tp8pp2"), llama).ok());
  EXPECT_TRUE(ValidateLayout(Parse("tp16"), llama).ok());  // KV heads replicated 2x
  EXPECT_EQ(ValidateLayout(Parse("tp3"), llama).message(),
            "tp3: tp (3) must divide llama-3.1-70b's 64 attention heads; use tp 1, 2, 4, 8, 16, "
            "32, 64");
  EXPECT_NE(
      ValidateLayout(Parse("pp81"), llama).message().find("exceeds llama-3.1-70b's 80 layers"),
      std::string::npos);
  EXPECT_NE(ValidateLayout(Parse("ep2"), llama).message().find("is dense"), std::string::npos);
  const ModelSpec mixtral = LoadModel("mixtral-8x7b").value();  // 8 experts
  EXPECT_NE(
      ValidateLayout(Parse("ep16"), mixtral).message().find("must divide mixtral-8x7b's 8 experts"),
      std::string::npos);
  const ModelSpec tiny = LoadModel("tiny-dense").value();  // 12 heads, 2 KV heads
  EXPECT_TRUE(ValidateLayout(Parse("tp3"), tiny).ok());  // TP above the KV heads, not a power of 2
}

}  // namespace
}  // namespace shardwise
