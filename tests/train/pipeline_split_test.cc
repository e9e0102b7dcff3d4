// Pipeline splits as Megatron-Core makes them: even, embedding and loss counted as layers,
// first/last stage counts, the --pipeline-model-parallel-layout string, and the one-line errors
// when a split cannot hold the layers. Expected splits are counted by hand below.
#include "shardwise/train/pipeline_split.h"

#include <gtest/gtest.h>

#include <numeric>

namespace shardwise::train {
namespace {

int64_t Layers(const PipelineSplit& s) {
  return std::accumulate(s.chunks.begin(), s.chunks.end(), int64_t{0},
                         [](int64_t n, const PipelineChunk& c) { return n + c.layers; });
}

TEST(PipelineSplit, EvenWhenTheLayersDivide) {
  // Llama-3 70B on H100 (NVIDIA's table): 80 layers, pp 8, vp 5: 40 chunks of 2 layers.
  const PipelineSplit s = SplitPipeline(80, 0, 8, 5, {}).value();
  ASSERT_EQ(s.chunks.size(), 40u);
  for (const PipelineChunk& c : s.chunks) EXPECT_EQ(c.layers, 2);
  EXPECT_TRUE(s.chunks.front().embedding);
  EXPECT_TRUE(s.chunks.back().loss);
  // Rank 0 holds chunks 0, 8, 16, 24, 32: layers 0-1, 16-17, 32-33, 48-49, 64-65.
  const std::vector<PipelineChunk> rank0 = s.ChunksOf(0);
  ASSERT_EQ(rank0.size(), 5u);
  EXPECT_EQ(rank0[1].first_layer, 16);
  EXPECT_EQ(rank0[4].first_layer, 64);
}

TEST(PipelineSplit, EmbeddingAndLossCountedAsLayers) {
  // Llama-3.1 405B, 126 layers over pp 8 x vp 8 = 64 chunks: 126 + 2 = 128 = 64 x 2, so the first
  // chunk holds the embedding and one layer, the last one layer and the loss, the rest two.
  const PipelineSplit s = SplitPipeline(126, 0, 8, 8, {}).value();
  ASSERT_EQ(s.chunks.size(), 64u);
  EXPECT_EQ(s.chunks.front().layers, 1);
  EXPECT_EQ(s.chunks.back().layers, 1);
  for (size_t i = 1; i + 1 < s.chunks.size(); ++i) EXPECT_EQ(s.chunks[i].layers, 2) << i;
  EXPECT_EQ(Layers(s), 126);
  EXPECT_EQ(s.ToString().substr(0, 6), "Et|tt|");
  // Qwen3-235B, 94 layers over pp 4 x vp 12 = 48 chunks: (94 + 2) / 48 = 2.
  const PipelineSplit q = SplitPipeline(94, 0, 4, 12, {}).value();
  EXPECT_EQ(q.chunks.front().layers, 1);
  EXPECT_EQ(q.chunks.back().layers, 1);
  EXPECT_EQ(Layers(q), 94);
}

TEST(PipelineSplit, UnevenFirstAndLastChunks) {
  // DeepSeek-V3, 61 layers over pp 16: ceil((61 + 2) / 16) = 4 slots per chunk; the first takes
  // the embedding and 3 layers, 14 middle chunks 4 each (56), the last the remaining 2 and the
  // loss. With one MTP module it counts as a slot too: ceil(64 / 16) = 4, the last chunk
  // 61 - 3 - 56 = 2 layers, the module and the loss.
  const PipelineSplit s = SplitPipeline(61, 0, 16, 1, {}).value();
  EXPECT_EQ(s.chunks.front().layers, 3);
  EXPECT_EQ(s.chunks[1].layers, 4);
  EXPECT_EQ(s.chunks.back().layers, 2);
  EXPECT_EQ(Layers(s), 61);
  const PipelineSplit mtp = SplitPipeline(61, 1, 16, 1, {}).value();
  EXPECT_EQ(mtp.chunks.back().layers, 2);
  EXPECT_EQ(mtp.chunks.back().mtp, 1);
  EXPECT_EQ(mtp.ToString().substr(mtp.ToString().size() - 5), "|ttmL");
}

TEST(PipelineSplit, SlotsThatDoNotDivideSpreadEvenly) {
  // Llama-3.1-70B, 80 layers over pp 32: 82 slots, at least ceil(82 / 32) = 3 a chunk. Filled to
  // 3 the chunks hold 2 + 30 x 3 + 2 = 94 layers, 14 too many, taken back from the last chunk
  // (2 -> 1) and chunks 30 down to 18 (3 -> 2): 2 + 17 x 3 + 13 x 2 + 1 = 80. Filling each chunk
  // to 3 from the first left the last five empty, and the split was refused.
  const PipelineSplit s = SplitPipeline(80, 0, 32, 1, {}).value();
  ASSERT_EQ(s.chunks.size(), 32u);
  EXPECT_EQ(s.chunks[0].layers, 2);
  for (size_t i = 1; i <= 17; ++i) EXPECT_EQ(s.chunks[i].layers, 3) << i;
  for (size_t i = 18; i <= 30; ++i) EXPECT_EQ(s.chunks[i].layers, 2) << i;
  EXPECT_EQ(s.chunks[31].layers, 1);
  EXPECT_EQ(Layers(s), 80);
  // pp 8 x vp 3 = 24 chunks: at least ceil(82 / 24) = 4; 3 + 22 x 4 + 3 = 94, 14 too many: the
  // last 3 -> 2 and chunks 22 down to 10 4 -> 3: 3 + 9 x 4 + 13 x 3 + 2 = 80.
  const PipelineSplit v = SplitPipeline(80, 0, 8, 3, {}).value();
  EXPECT_EQ(v.chunks[9].layers, 4);
  EXPECT_EQ(v.chunks[10].layers, 3);
  EXPECT_EQ(v.chunks[23].layers, 2);
  EXPECT_EQ(Layers(v), 80);
  // pp 64: at least 2 a chunk; 1 + 62 x 2 + 1 = 126, 46 too many: the last keeps only the loss,
  // chunks 62 down to 18 one layer each: 1 + 17 x 2 + 45 = 80.
  const PipelineSplit w = SplitPipeline(80, 0, 64, 1, {}).value();
  EXPECT_EQ(w.chunks[17].layers, 2);
  EXPECT_EQ(w.chunks[18].layers, 1);
  EXPECT_EQ(w.chunks[63].layers, 0);
  EXPECT_TRUE(w.chunks[63].loss);
  EXPECT_EQ(Layers(w), 80);
}

TEST(PipelineSplit, MegatronLayoutString) {
  // Megatron-Core's DeepSeek-V3 example: the embedding and 3 layers, 29 chunks of 2, the MTP
  // module, the loss: 32 chunks (pp 16 x vp 2), 3 + 58 = 61 layers.
  PipelineSplitRequest r;
  r.kind = PipelineSplitRequest::Kind::kLayout;
  r.layout = "Et*3|(tt|)*29m|L";
  const PipelineSplit s = SplitPipeline(61, 1, 16, 2, r).value();
  ASSERT_EQ(s.chunks.size(), 32u);
  EXPECT_EQ(s.chunks[0].layers, 3);
  EXPECT_TRUE(s.chunks[0].embedding);
  EXPECT_EQ(s.chunks[29].layers, 2);
  EXPECT_EQ(s.chunks[29].first_layer, 59);
  EXPECT_EQ(s.chunks[30].mtp, 1);
  EXPECT_TRUE(s.chunks[31].loss);
  EXPECT_EQ(Layers(s), 61);
}

TEST(PipelineSplit, FirstAndLastStageLayers) {
  // 126 layers, pp 8, 15 on the first and last stage: the six others share 96, 16 each.
  PipelineSplitRequest r;
  r.kind = PipelineSplitRequest::Kind::kFirstLast;
  r.first_stage_layers = 15;
  r.last_stage_layers = 15;
  const PipelineSplit s = SplitPipeline(126, 0, 8, 1, r).value();
  EXPECT_EQ(s.chunks[0].layers, 15);
  EXPECT_EQ(s.chunks[3].layers, 16);
  EXPECT_EQ(s.chunks[7].layers, 15);
  EXPECT_EQ(s.chunks[7].first_layer, 111);
}

void ExpectError(const StatusOr<PipelineSplit>& s, const std::string& text) {
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find(text), std::string::npos) << s.status().message();
  EXPECT_EQ(s.status().message().find('\n'), std::string::npos);
}

TEST(PipelineSplit, SplitsThatCannotHoldTheLayers) {
  ExpectError(SplitPipeline(3, 0, 8, 1, {}), "more than 3 layers can fill");
  PipelineSplitRequest r;
  r.kind = PipelineSplitRequest::Kind::kLayout;
  r.layout = "Et|tL";
  ExpectError(SplitPipeline(4, 0, 4, 1, r), "has 2 chunks where pp x vp = 4 x 1 needs 4");
  ExpectError(SplitPipeline(3, 0, 2, 1, r), "places 2 layers; the model has 3");
  r.layout = "t|EtL";
  ExpectError(SplitPipeline(2, 0, 2, 1, r), "one 'E', in the first chunk");
  r.layout = "Et|(t|L";
  ExpectError(SplitPipeline(2, 0, 3, 1, r), "unmatched '('");
  r.layout = "Ex|tL";
  ExpectError(SplitPipeline(2, 0, 2, 1, r), "unexpected 'x'");
  // An MTP module placed where the model has none: the fix is the count, or the layout.
  r.layout = "Et|tmL";
  ExpectError(SplitPipeline(2, 0, 2, 1, r),
              "must hold the 0 MTP module(s) ('m') after the last layer; it has 1 (set "
              "`mtp_layers` 1, or change the 'm's)");
  r.layout = "E(t|)*999999999L";
  ExpectError(SplitPipeline(2, 0, 2, 1, r), "more than a million");
  PipelineSplitRequest counts;
  counts.kind = PipelineSplitRequest::Kind::kFirstLast;
  counts.first_stage_layers = 14;
  counts.last_stage_layers = 14;
  // 126 - 28 = 98 layers over the other 6 stages do not divide; with the last at 14 the first
  // must leave a multiple of 6: 112 - 16 = 96 (16 each) is the nearest to the 14 asked.
  ExpectError(SplitPipeline(126, 0, 8, 1, counts),
              "`first_stage_layers` 14 and `last_stage_layers` 14 leave 98 of the 126 layers for "
              "the other 6 pipeline stages, which must share them evenly (at least one each); "
              "try `first_stage_layers` 16");
  // Interleaved 2: every stage's layers must split into 2 chunks. 32 - 4 = 28 layers over the
  // other 3 stages do not divide; 5 would (27 = 3 x 9) but 5 and 9 are odd; 2 leaves 30 = 3 x 10
  // and 8 leaves 24 = 3 x 8, and 2 is the nearer to the 4 asked.
  PipelineSplitRequest interleaved;
  interleaved.kind = PipelineSplitRequest::Kind::kFirstLast;
  interleaved.first_stage_layers = 4;
  ExpectError(SplitPipeline(32, 0, 4, 2, interleaved), "try `first_stage_layers` 2");
  // pp 2 with both stages given: there are no others, so the two must hold all 32.
  counts.first_stage_layers = counts.last_stage_layers = 10;
  ExpectError(SplitPipeline(32, 0, 2, 1, counts),
              "`first_stage_layers` 10 and `last_stage_layers` 10 place 20 of the 32 layers; with "
              "pp 2 the two stages must hold them all; try `first_stage_layers` 22");
  // Only the first given: 32 - 3 = 29 layers do not share over 7 stages; 32 - 4 = 28 do.
  PipelineSplitRequest first_only;
  first_only.kind = PipelineSplitRequest::Kind::kFirstLast;
  first_only.first_stage_layers = 3;
  ExpectError(SplitPipeline(32, 0, 8, 1, first_only),
              "`first_stage_layers` 3 leaves 29 of the 32 layers for the other 7 pipeline stages, "
              "which must share them evenly (at least one each); try `first_stage_layers` 4");
  counts.first_stage_layers = counts.last_stage_layers = 15;
  ExpectError(SplitPipeline(126, 0, 8, 2, counts), "does not split into 2 model chunks");
}

}  // namespace
}  // namespace shardwise::train
