// Shard geometry against hand calculations: stage layers, head and KV-head ranges, vocabulary
// rows, the place of a rank in its expert group, and the rank numbering (TP innermost, then CP,
// DP, PP).
#include "shardwise/layout/shard_geometry.h"

#include <gtest/gtest.h>

#include "shardwise/model/catalog.h"

namespace shardwise {
namespace {

TEST(ShardGeometry, StagesAreContiguousAndTheFirstTakeTheRemainder) {
  // 10 layers over 4 stages: 10 = 3 + 3 + 2 + 2.
  EXPECT_EQ(StageLayerRange(10, 4, 0), (Range{0, 3}));
  EXPECT_EQ(StageLayerRange(10, 4, 1), (Range{3, 6}));
  EXPECT_EQ(StageLayerRange(10, 4, 2), (Range{6, 8}));
  EXPECT_EQ(StageLayerRange(10, 4, 3), (Range{8, 10}));
  EXPECT_EQ(StageLayerRange(12, 1, 0), (Range{0, 12}));
  EXPECT_EQ(StageLayerRange(4, 4, 3), (Range{3, 4}));
}

TEST(ShardGeometry, KvHeadsFollowTheQueryHeads) {
  // 12 query / 2 KV heads (groups of 6), tp 3: query heads 0-3, 4-7, 8-11 read KV heads {0},
  // {0, 1} (4, 5 -> 0; 6, 7 -> 1) and {1}.
  EXPECT_EQ(HeadRange(12, 2, 3, 0).heads, (Range{0, 4}));
  EXPECT_EQ(HeadRange(12, 2, 3, 0).kv_heads, (Range{0, 1}));
  const HeadShard middle = HeadRange(12, 2, 3, 1);
  EXPECT_EQ(middle.heads, (Range{4, 8}));
  EXPECT_EQ(middle.kv_heads, (Range{0, 2}));
  EXPECT_EQ(middle.LocalKvHead(1, 6), 0);  // head 5
  EXPECT_EQ(middle.LocalKvHead(2, 6), 1);  // head 6
  EXPECT_EQ(HeadRange(12, 2, 3, 2).kv_heads, (Range{1, 2}));
  // 64 query / 8 KV heads: tp 8 -> one each; tp 16 -> ranks 2i and 2i + 1 share KV head i.
  EXPECT_EQ(HeadRange(64, 8, 8, 5).kv_heads, (Range{5, 6}));
  EXPECT_EQ(HeadRange(64, 8, 16, 11).kv_heads, (Range{5, 6}));
}

TEST(ShardGeometry, KvHeadsPerRankIsTheMostAnyRankHolds) {
  // By hand: 64 query / 8 KV heads (groups of 8): tp 8 -> 1 each; tp 4 -> 2 each; tp 16 ->
  // each rank's 4 query heads sit inside one group -> 1 (KV replicated).
  EXPECT_EQ(KvHeadsPerRank(64, 8, 8), 1);
  EXPECT_EQ(KvHeadsPerRank(64, 8, 4), 2);
  EXPECT_EQ(KvHeadsPerRank(64, 8, 16), 1);
  // 12 query / 2 KV heads, tp 3: the middle rank spans both groups, so the most is 2.
  EXPECT_EQ(KvHeadsPerRank(12, 2, 3), 2);
  EXPECT_EQ(KvHeadsPerRank(12, 2, 4), 1);  // 3 query heads per rank, inside one group
  // Over the ranks: 1 + 2 + 1 = 4 for tp 3; 16 x 1 for 64/8 at tp 16.
  EXPECT_EQ(KvHeadsOverRanks(12, 2, 3), 4);
  EXPECT_EQ(KvHeadsOverRanks(64, 8, 16), 16);
}

TEST(ShardGeometry, VocabularyRowsAreCeilSharesPadded) {
  // 32,000 rows over tp 3: ceil = 10,667; the last rank holds 32,000 - 21,334 = 10,666.
  EXPECT_EQ(VocabRange(32000, 3, 0).rows, (Range{0, 10667}));
  EXPECT_EQ(VocabRange(32000, 3, 2).rows, (Range{21334, 32000}));
  EXPECT_EQ(VocabRange(32000, 3, 2).padded_rows, 10667);
  // 10 rows over tp 4: 3, 3, 3, 1.
  EXPECT_EQ(VocabRange(10, 4, 3).rows, (Range{9, 10}));
  EXPECT_EQ(VocabRange(10, 4, 3).padded_rows, 3);
}

TEST(ShardGeometry, RanksAreNumberedTpCpDpPp) {
  // tp2 cp2 dp2 pp2: world rank 13 = 1 + 2 x (0 + 2 x (1 + 2 x 1)): tp 1, cp 0, dp 1, stage 1.
  const Layout l{2, 2, 2, 1, 2};
  const RankPlacement p = PlaceRank(l, 13);
  EXPECT_EQ(p.tp_index, 1);
  EXPECT_EQ(p.cp_index, 0);
  EXPECT_EQ(p.dp_index, 1);
  EXPECT_EQ(p.stage, 1);
  EXPECT_EQ(p.replica, 1);  // no attention DP without ep > tp x cp
  EXPECT_EQ(p.stage_rank, 1);
}

TEST(ShardGeometry, ExpertGroupPlaces) {
  // tp2ep4 over dp2: attention DP 4 / 2 = 2, expert-TP 2 x 2 / 4 = 1; world rank 3 is tp 1 of
  // DP rank 1, stage rank (1 x 1 + 0) x 2 + 1 = 3, EP rank 3.
  const Layout wide{2, 2, 1, 4, 1};
  const ExpertRank a = ExpertRankOf(wide, PlaceRank(wide, 3));
  EXPECT_EQ(a.ep_index, 3);
  EXPECT_EQ(a.etp, 1);
  // tp4ep2: expert-TP 2; world rank 3 is EP rank 1, expert-TP rank 1.
  const Layout narrow{1, 4, 1, 2, 1};
  const ExpertRank b = ExpertRankOf(narrow, PlaceRank(narrow, 3));
  EXPECT_EQ(b.ep_index, 1);
  EXPECT_EQ(b.etp, 2);
  EXPECT_EQ(b.etp_index, 1);
  // ep 1: the TP group splits every expert.
  const Layout tp4{1, 4, 1, 1, 1};
  const ExpertRank c = ExpertRankOf(tp4, PlaceRank(tp4, 2));
  EXPECT_EQ(c.ep_index, 0);
  EXPECT_EQ(c.etp, 4);
  EXPECT_EQ(c.etp_index, 2);
  // 8 experts + 4 replicas over ep 4: 3 slots each; EP rank 2 holds slots 6-8.
  const ExpertPlacement placement = PlaceExperts(8, 4, 4).value();
  EXPECT_EQ(ExpertSlots(placement, 2), (Range{6, 9}));
}

TEST(ShardGeometry, RankShardOfTinyDense) {
  const ModelSpec m = LoadModel("tiny-dense").value();  // 12 heads, 2 KV heads
  const Layout l{1, 3, 2, 1, 1};                        // tp3pp2
  const RankShard s = ShardRank(m, l, 4);               // tp 1 of stage 1
  EXPECT_EQ(s.layers, StageLayerRange(m.num_layers(), 2, 1));
  EXPECT_FALSE(s.first_stage);
  EXPECT_TRUE(s.last_stage);
  EXPECT_EQ(s.heads.heads, (Range{4, 8}));
  EXPECT_EQ(s.ffn, (Range{m.intermediate_size / 3, 2 * m.intermediate_size / 3}));
  EXPECT_EQ(s.vocab.rows.begin, (m.vocab_size + 2) / 3);
}

}  // namespace
}  // namespace shardwise
