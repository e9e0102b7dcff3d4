// Prefix caching in the step model: prefill computes only the uncached tokens and attends to
// the cached ones, against a hand count of FLOPs.
#include <gtest/gtest.h>

#include "shardwise/hw/cluster.h"
#include "shardwise/model/catalog.h"
#include "shardwise/perf/step.h"

namespace shardwise {
namespace {

PrefillEstimate Prefill(double hit_rate) {
  const ModelSpec m = LoadModel("llama-3.1-8b").value();
  const ClusterSpec c = WithGpus(LoadCluster("dgx-h100").value(), 1).value();
  PerfOptions o;
  o.prefix_hit_rate = hit_rate;
  return StepModel::Create(m, c, ParseLayout("tp1").value(), o).value().EstimatePrefill(4096);
}

TEST(PrefixCache, HalfThePromptCachedSkipsItsGemmsButNotItsKeys) {
  // Llama-3.1-8B, a 4,096-token prompt with 2,048 tokens in the cache.
  // GEMMs per token and layer: QKV (32 + 2 x 8) x 128 x 4,096 = 25,165,824, O 4,096 x 4,096 =
  // 16,777,216, gate+up+down 3 x 4,096 x 14,336 = 176,160,768: 218,103,808 parameters x 32
  // layers = 6,979,321,856, 2 FLOPs each; 2,048 tokens fewer: 28,587,302,322,176 FLOPs.
  // Attention: 4,096 x 4,097 / 2 = 8,390,656 causal pairs uncached; cached, the last 2,048
  // queries still attend to every earlier key: 8,390,656 - 2,048 x 2,049 / 2 = 6,292,480; the
  // 2,098,176 fewer pairs x 2 x 32 heads x (128 + 128) FLOPs x 32 layers = 1,100,048,498,688.
  // The LM head runs on the last token either way.
  const PrefillEstimate full = Prefill(0.0);
  const PrefillEstimate half = Prefill(0.5);
  const double expected = 28'587'302'322'176.0 + 1'100'048'498'688.0;
  EXPECT_NEAR(full.prefill.flops - half.prefill.flops, expected, expected * 1e-9);
  EXPECT_LT(half.ttft_s, full.ttft_s);
  EXPECT_LT(half.s_per_request, full.s_per_request);
  // Everything cached still computes the last token.
  EXPECT_GT(Prefill(1.0).prefill.flops, 0);
}

}  // namespace
}  // namespace shardwise
