// Expert replicas and their placement against hand-worked examples.
#include "shardwise/layout/expert_placement.h"

#include <gtest/gtest.h>

namespace shardwise {
namespace {

TEST(ExpertPlacement, WithoutReplicasRanksTakeConsecutiveExperts) {
  const ExpertPlacement p = PlaceExperts(8, 4, 0).value();
  EXPECT_EQ(p.slots_per_rank, 2);
  EXPECT_EQ(p.slot_expert, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(p.Rank(5), 2);
}

TEST(ExpertPlacement, UniformLoadReplicatesTheFirstExpertsAndDealsCopiesRoundTheRanks) {
  // 8 experts + 2 copies over 2 ranks: copies of experts 0 and 1 (ties go to the lower id);
  // the list 0 0 1 1 2 3 4 5 6 7 dealt alternately: rank 0 gets 0 1 2 4 6, rank 1 0 1 3 5 7.
  const ExpertPlacement p = PlaceExperts(8, 2, 2).value();
  EXPECT_EQ(p.slots_per_rank, 5);
  EXPECT_EQ(p.slot_expert, (std::vector<int64_t>{0, 1, 2, 4, 6, 0, 1, 3, 5, 7}));
  EXPECT_EQ(p.replicas[0], (std::vector<int64_t>{0, 5}));
  EXPECT_EQ(p.replicas[3], (std::vector<int64_t>{7}));
}

TEST(ExpertPlacement, HotExpertsGetTheCopies) {
  // Loads 8, 1 x 6, 4: the first copy goes to expert 0 (8 per copy); then expert 0 (4 per copy)
  // and expert 7 (4) tie, but expert 0 already has ep = 2 copies, so expert 7 gets the second.
  const ExpertPlacement p = PlaceExperts(8, 2, 2, {8, 1, 1, 1, 1, 1, 1, 4}).value();
  EXPECT_EQ(p.replicas[0].size(), 2u);
  EXPECT_EQ(p.replicas[7].size(), 2u);
  EXPECT_NE(p.Rank(p.replicas[7][0]), p.Rank(p.replicas[7][1]));
}

TEST(ExpertPlacement, NoRankHoldsAnExpertTwice) {
  for (int64_t ep : {2, 4}) {
    for (int64_t r = 0; r <= 8 * (ep - 1); r += ep) {
      const ExpertPlacement p = PlaceExperts(8, ep, r).value();
      for (const std::vector<int64_t>& slots : p.replicas) {
        for (size_t i = 1; i < slots.size(); ++i) EXPECT_NE(p.Rank(slots[i - 1]), p.Rank(slots[i]));
      }
    }
  }
}

TEST(ExpertPlacement, BadCounts) {
  EXPECT_FALSE(PlaceExperts(8, 2, 1).ok());   // 9 slots over 2 ranks
  EXPECT_FALSE(PlaceExperts(8, 2, 10).ok());  // a third copy on 2 ranks
  EXPECT_FALSE(PlaceExperts(8, 2, -2).ok());
}

TEST(ExpertPlacement, ReplicasShareTheTokens) {
  const ExpertPlacement p = PlaceExperts(8, 2, 2).value();
  std::vector<int64_t> sent(10, 0);
  // Six tokens for expert 0 (slots 0 and 5) from a sender starting at replica 1: 5, 0, 5, 0...
  std::vector<int64_t> got;
  for (int i = 0; i < 6; ++i) got.push_back(ChooseReplica(p, 0, 1, sent));
  EXPECT_EQ(got, (std::vector<int64_t>{5, 0, 5, 0, 5, 0}));
  EXPECT_EQ(ChooseReplica(p, 3, 1, sent), 7);  // a single copy
}

TEST(ExpertPlacement, LoadPacksTheHeaviestCopyOntoTheLeastLoadedRank) {
  // Loads 6, 3, 2, 1 over ep 2 with 2 copies, 3 slots per rank. Copies: expert 0 (6 per copy,
  // then 3), then expert 1 (3; expert 0 is at ep = 2 copies): per copy e0 3 3, e1 1.5 1.5,
  // e2 2, e3 1. Heaviest first onto the least-loaded rank (ties: the lower) that has room and
  // lacks the expert: e0 -> r0 (3), e0 -> r1 (3), e2 -> r0 (5), e1 -> r1 (4.5), e1 -> r0 (6.5),
  // e3 -> r1 (r0 is full; 5.5).
  const std::vector<double> load = {6, 3, 2, 1};
  const ExpertPlacement p = PlaceExperts(4, 2, 2, load).value();
  EXPECT_EQ(p.slot_expert, (std::vector<int64_t>{0, 2, 1, 0, 1, 3}));
  EXPECT_EQ(RankLoads(p, load), (std::vector<double>{6.5, 5.5}));
}

TEST(ExpertPlacement, LoadWithoutCopiesStillBalancesTheRanks) {
  // 6 -> r0, 3 -> r1, 2 -> r1 (3 < 6), 1 -> r0 (r1 is full): loads 7 and 5.
  const std::vector<double> load = {6, 3, 2, 1};
  const ExpertPlacement p = PlaceExperts(4, 2, 0, load).value();
  EXPECT_EQ(p.slot_expert, (std::vector<int64_t>{0, 3, 1, 2}));
  EXPECT_EQ(RankLoads(p, load), (std::vector<double>{7, 5}));
}

TEST(ExpertPlacement, UniformRankLoadsCountHalfCopies) {
  // 8 experts + 2 copies over 2 ranks (dealt as above): each rank holds a copy of experts 0 and
  // 1 (half their load each) and three whole experts: 0.5 + 0.5 + 3 = 4.
  const ExpertPlacement p = PlaceExperts(8, 2, 2).value();
  EXPECT_EQ(RankLoads(p, {}), (std::vector<double>{4, 4}));
}

}  // namespace
}  // namespace shardwise
