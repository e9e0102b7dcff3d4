// Parameter counts against published figures, and KV / FLOP accounting against hand
// calculations. Every expected number cites its source or shows its arithmetic.
#include "shardwise/model/accounting.h"

#include <gtest/gtest.h>

#include "load_model.h"
#include "shardwise/model/catalog.h"

namespace shardwise {
namespace {

using testing::Load;

// |actual / expected - 1| <= tolerance.
void ExpectWithin(double actual, double expected, double tolerance, const std::string& what) {
  EXPECT_NEAR(actual / expected, 1.0, tolerance)
      << what << ": got " << actual << ", published " << expected;
}

constexpr double kHalfPercent = 0.005;

// --- Published figures given to three or more significant digits: within 0.5%. ---

TEST(PublishedParams, Mixtral8x7b) {
  // Mistral AI, "Mixtral of experts" (Dec 2023): 46.7B total, 12.9B active per token. Mistral
  // counts both embedding tables in the active figure.
  const ParamBreakdown p = CountParams(Load("mixtral-8x7b"));
  ExpectWithin(p.total, 46.7e9, kHalfPercent, "total");
  ExpectWithin(p.active, 12.9e9, kHalfPercent, "active");
}

TEST(PublishedParams, Qwen25_72b) {
  // Qwen2.5-72B model card: 72.7B parameters (70.0B non-embedding).
  const ParamBreakdown p = CountParams(Load("qwen2.5-72b"));
  ExpectWithin(p.total, 72.7e9, kHalfPercent, "total");
  ExpectWithin(p.total - p.embedding - p.lm_head, 70.0e9, kHalfPercent, "non-embedding");
}

TEST(PublishedParams, DeepseekV3) {
  // DeepSeek-V3 README / arXiv:2412.19437: 671B total (main model, MTP module excluded).
  const ParamBreakdown p = CountParams(Load("deepseek-v3"));
  ExpectWithin(p.total, 671e9, kHalfPercent, "total");
}

TEST(PublishedParams, GptOss120b) {
  // gpt-oss model card: 116.83B total, 5.13B active. The active figure counts the unembedding
  // but not the input-embedding lookup, i.e. our active_matmul.
  const ParamBreakdown p = CountParams(Load("gpt-oss-120b"));
  ExpectWithin(p.total, 116.83e9, kHalfPercent, "total");
  ExpectWithin(p.active_matmul, 5.13e9, kHalfPercent, "active");
}

TEST(PublishedParams, GptOss20b) {
  // gpt-oss model card: 20.91B total, 3.61B active (same convention as above).
  const ParamBreakdown p = CountParams(Load("gpt-oss-20b"));
  ExpectWithin(p.total, 20.91e9, kHalfPercent, "total");
  ExpectWithin(p.active_matmul, 3.61e9, kHalfPercent, "active");
}

TEST(PublishedParams, Llama31_405b) {
  // Llama 3.1 model card: 405B.
  ExpectWithin(CountParams(Load("llama-3.1-405b")).total, 405e9, kHalfPercent, "total");
}

TEST(PublishedParams, Qwen3_235b) {
  // Qwen3-235B-A22B model card: 235B total, 234B non-embedding, 22B active.
  const ParamBreakdown p = CountParams(Load("qwen3-235b-a22b"));
  ExpectWithin(p.total, 235e9, kHalfPercent, "total");
  ExpectWithin(p.total - p.embedding - p.lm_head, 234e9, kHalfPercent, "non-embedding");
  ExpectWithin(p.active, 22e9, 0.5 / 22, "active (published to 2 digits: +-0.5B)");
}

// --- Published figures that are rounded size classes ("8B", "70B", "37B", "3.3B"). Their
// precision is half a unit of the last digit; we hold our count to that, and to an exact hand
// count from the config where the class name is not the count (Llama-2-70B is 68.98B). ---

TEST(PublishedParams, RoundedSizeClasses) {
  struct Row {
    const char* model;
    double published;
    double half_unit;
  };
  // Sources: Llama 2 model card (7B); Llama 3.1 model card (8B, 70B); Llama 3.3 model card (70B);
  // Qwen3-30B-A3B model card (30.5B); Mixtral 8x22B announcement (141B); Qwen3-32B model card
  // (32.8B).
  for (const Row& r : {Row{"llama-2-7b", 7e9, 0.5e9}, Row{"llama-3.1-8b", 8e9, 0.5e9},
                       Row{"qwen3-32b", 32.8e9, 0.05e9}, Row{"qwen3-30b-a3b", 30.5e9, 0.05e9},
                       Row{"mixtral-8x22b", 141e9, 0.5e9}}) {
    EXPECT_NEAR(CountParams(Load(r.model)).total, r.published, r.half_unit) << r.model;
  }
}

TEST(PublishedParams, ActiveRoundedFigures) {
  // DeepSeek-V3 README: 37B activated (input embedding excluded, as for gpt-oss).
  EXPECT_NEAR(CountParams(Load("deepseek-v3")).active_matmul, 37e9, 0.5e9);
  // Mixtral 8x22B announcement: 39B active (both embeddings counted, as for 8x7B).
  EXPECT_NEAR(CountParams(Load("mixtral-8x22b")).active, 39e9, 0.5e9);
  // Qwen3-30B-A3B model card: 3.3B activated.
  EXPECT_NEAR(CountParams(Load("qwen3-30b-a3b")).active, 3.3e9, 0.05e9 + 0.01e9);
}

TEST(HandCount, Llama2_70b) {
  // Llama-2-70B is published as "70B" but the config gives, by hand:
  //   embeddings 2 x 32000 x 8192                     =    524,288,000
  //   attention 80 x (8192x8192x2 + 8192x1024x2)      = 12,079,595,520
  //   MLP 80 x 3 x 8192 x 28672                       = 56,371,445,760
  //   norms 80 x 2 x 8192 + 8192                      =      1,318,912
  //   total                                           = 68,976,648,192
  const ParamBreakdown p = CountParams(Load("llama-2-70b"));
  EXPECT_EQ(p.total, 68'976'648'192);
}

TEST(HandCount, Llama31_70b) {
  // "70B" (Llama 3.1 and 3.3 model cards) is a size class: the config gives, by hand,
  //   embeddings 2 x 128256 x 8192                    =  2,101,346,304
  //   attention 80 x (8192x8192x2 + 8192x1024x2)      = 12,079,595,520
  //   MLP 80 x 3 x 8192 x 28672                       = 56,371,445,760
  //   norms 80 x 2 x 8192 + 8192                      =      1,318,912
  //   total                                           = 70,553,706,496  (0.8% above "70B")
  for (const char* name : {"llama-3.1-70b", "llama-3.3-70b"}) {
    const ParamBreakdown p = CountParams(Load(name));
    EXPECT_EQ(p.total, 70'553'706'496) << name;
    EXPECT_NEAR(p.total / 70e9, 1.0, 0.01) << name;
  }
}

TEST(HandCount, DeepseekV3AttentionPerLayer) {
  // MLA, per layer: q_a 7168x1536 + norm 1536 + q_b 1536x(128x192) + kv_a 7168x(512+64)
  //   + norm 512 + kv_b 512x(128x(128+128)) + o (128x128)x7168
  //   = 11,010,048 + 1,536 + 37,748,736 + 4,128,768 + 512 + 16,777,216 + 117,440,512
  //   = 187,107,328
  EXPECT_EQ(AttentionParamsPerLayer(Load("deepseek-v3")), 187'107'328);
}

TEST(HandCount, TiedEmbeddingsCountedOnce) {
  ModelSpec m = Load("tiny-dense");
  const int64_t untied = CountParams(m).total;
  m.tie_word_embeddings = true;
  const ParamBreakdown tied = CountParams(m);
  EXPECT_EQ(untied - tied.total, 2048 * 384);  // one vocab x hidden table fewer
  EXPECT_EQ(tied.active_matmul, tied.active);  // the shared table is the LM head matmul
}

// --- KV cache bytes per token, by hand (issue text and configs). ---

TEST(KvBytes, Llama31_70bBf16) {
  // 2 (K and V) x 80 layers x 8 KV heads x 128 head dim x 2 bytes = 327,680 bytes.
  EXPECT_DOUBLE_EQ(KvBytesPerToken(Load("llama-3.1-70b"), Dtype::kBf16), 327'680);
}

TEST(KvBytes, DeepseekV3MlaLatent) {
  // (kv_lora_rank 512 + rope 64) x 61 layers x 2 bytes = 70,272 bytes.
  EXPECT_DOUBLE_EQ(KvBytesPerToken(Load("deepseek-v3"), Dtype::kBf16), 70'272);
}

TEST(KvBytes, MhaLlama2_7b) {
  // MHA: 2 x 32 layers x 32 heads x 128 x 2 bytes = 524,288 bytes.
  EXPECT_DOUBLE_EQ(KvBytesPerToken(Load("llama-2-7b"), Dtype::kBf16), 524'288);
}

TEST(KvBytes, Fp8HalvesBf16) {
  // fp8 is 1 byte per element: 327,680 / 2.
  EXPECT_DOUBLE_EQ(KvBytesPerToken(Load("llama-3.1-70b"), Dtype::kFp8), 163'840);
}

TEST(KvBytes, SlidingWindowLayersCapAtWindow) {
  // gpt-oss-120b: 36 layers alternating sliding (window 128) and full; per layer per token
  // 2 x 8 x 64 x 2 = 2,048 bytes. For 10,000 tokens:
  //   18 full layers x 10,000 x 2,048 + 18 sliding layers x 128 x 2,048 = 373,358,592 bytes.
  const ModelSpec m = Load("gpt-oss-120b");
  EXPECT_EQ(m.num_sliding_layers(), 18);
  EXPECT_DOUBLE_EQ(KvBytesForSequence(m, 10'000, Dtype::kBf16), 373'358'592);
  // Within the window every layer keeps every token: 36 x 100 x 2,048.
  EXPECT_DOUBLE_EQ(KvBytesForSequence(m, 100, Dtype::kBf16), 7'372'800);
}

// --- FLOPs, by hand. ---

TEST(Flops, DecodeIsTwiceActiveMatmulParamsPlusAttention) {
  // Llama-3.1-8B decode at context 1,000: matmul = 2 x active_matmul params;
  // attention = 32 layers x 2 x 32 heads x (128 + 128) x 1,000 = 524,288,000.
  const ModelSpec m = Load("llama-3.1-8b");
  const Flops f = DecodeFlopsPerToken(m, 1000);
  EXPECT_DOUBLE_EQ(f.matmul, 2.0 * static_cast<double>(CountParams(m).active_matmul));
  EXPECT_DOUBLE_EQ(f.attention, 524'288'000.0);
}

TEST(Flops, PrefillIsCausal) {
  // tiny-dense prefill of 4 tokens: causal keys 1+2+3+4 = 10 per layer;
  // attention = 4 layers x 2 x 12 heads x (32 + 32) x 10 = 61,440.
  // matmuls: body (active_matmul - LM head) x 4 tokens, LM head once: 2 x 2048 x 384.
  const ModelSpec m = Load("tiny-dense");
  const Flops f = PrefillFlops(m, 4);
  EXPECT_DOUBLE_EQ(f.attention, 61'440.0);
  const double lm_head = 2048.0 * 384.0;
  const double body = static_cast<double>(CountParams(m).active_matmul) - lm_head;
  EXPECT_DOUBLE_EQ(f.matmul, 2.0 * (4.0 * body + lm_head));
}

// --- Weight bytes. ---

TEST(WeightBytes, PerDtype) {
  const ModelSpec m = Load("llama-2-70b");
  const double params = 68'976'648'192.0;
  EXPECT_DOUBLE_EQ(WeightBytes(m, Dtype::kBf16), params * 2);
  EXPECT_DOUBLE_EQ(WeightBytes(m, Dtype::kFp8), params);
  // int4 with one bf16 scale per 128 weights: 4 + 16/128 bits = 0.515625 bytes.
  EXPECT_DOUBLE_EQ(WeightBytes(m, Dtype::kInt4), params * 0.515625);
  // mxfp4: 32 four-bit values share one 8-bit exponent: (32 x 4 + 8) / 32 / 8 = 0.53125 bytes.
  EXPECT_DOUBLE_EQ(WeightBytes(m, Dtype::kMxfp4), params * 0.53125);
}

TEST(WeightBytes, GptOssNativeQuantisesOnlyExperts) {
  // The published gpt-oss-120b checkpoint is ~60.8 GiB (gpt-oss model card): experts in mxfp4,
  // everything else bf16. Our count must land within 2% of 60.8 GiB = 65.28e9 bytes.
  EXPECT_NEAR(NativeWeightBytes(Load("gpt-oss-120b")) / 65.28e9, 1.0, 0.02);
}

}  // namespace
}  // namespace shardwise
