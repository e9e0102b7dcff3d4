#include "shardwise/layout/shard_geometry.h"

#include <algorithm>

namespace shardwise {

RankPlacement PlaceRank(const Layout& l, int world_rank) {
  RankPlacement p;
  p.world_rank = world_rank;
  p.tp_index = world_rank % static_cast<int>(l.tp);
  p.cp_index = (world_rank / static_cast<int>(l.tp)) % static_cast<int>(l.cp);
  const int rest = world_rank / static_cast<int>(l.tp * l.cp);
  p.dp_index = rest % static_cast<int>(l.dp);
  p.stage = rest / static_cast<int>(l.dp);
  const int adp = static_cast<int>(l.AttentionDp());
  p.replica = p.dp_index / adp;
  p.adp_index = p.dp_index % adp;
  p.stage_rank =
      (p.adp_index * static_cast<int>(l.cp) + p.cp_index) * static_cast<int>(l.tp) + p.tp_index;
  return p;
}

Range StageLayerRange(int64_t layers, int64_t pp, int64_t stage) {
  const int64_t begin = stage * (layers / pp) + std::min(stage, layers % pp);
  return {begin, begin + layers / pp + (stage < layers % pp ? 1 : 0)};
}

Range EvenShare(int64_t width, int64_t parts, int64_t index) {
  const int64_t part = width / parts;
  return {index * part, (index + 1) * part};
}

HeadShard HeadRange(int64_t num_heads, int64_t num_kv_heads, int64_t tp, int64_t tp_index) {
  HeadShard s;
  s.heads = EvenShare(num_heads, tp, tp_index);
  const int64_t group = num_heads / num_kv_heads;
  s.kv_heads = {s.heads.begin / group, (s.heads.end - 1) / group + 1};
  return s;
}

int64_t KvHeadsPerRank(int64_t num_heads, int64_t num_kv_heads, int64_t tp) {
  int64_t most = 0;
  for (int64_t r = 0; r < tp; ++r) {
    most = std::max(most, HeadRange(num_heads, num_kv_heads, tp, r).kv_heads.size());
  }
  return most;
}

int64_t KvHeadsOverRanks(int64_t num_heads, int64_t num_kv_heads, int64_t tp) {
  int64_t total = 0;
  for (int64_t r = 0; r < tp; ++r)
    total += HeadRange(num_heads, num_kv_heads, tp, r).kv_heads.size();
  return total;
}

VocabShard VocabRange(int64_t vocab, int64_t tp, int64_t tp_index) {
  const int64_t part = (vocab + tp - 1) / tp;
  const int64_t begin = std::min(vocab, tp_index * part);
  return {{begin, std::min(vocab, begin + part)}, part};
}

ExpertRank ExpertRankOf(const Layout& l, const RankPlacement& p) {
  if (l.ep == 1) return {0, l.tp, p.tp_index};
  const int64_t etp = l.ExpertTp();
  return {p.stage_rank / etp, etp, p.stage_rank % etp};
}

Range ExpertSlots(const ExpertPlacement& placement, int64_t ep_index) {
  const int64_t n = placement.slots_per_rank;
  return {ep_index * n, (ep_index + 1) * n};
}

RankShard ShardRank(const ModelSpec& m, const Layout& l, int world_rank) {
  RankShard s;
  s.place = PlaceRank(l, world_rank);
  s.layers = StageLayerRange(m.num_layers(), l.pp, s.place.stage);
  s.first_stage = s.layers.begin == 0;
  s.last_stage = s.layers.end == m.num_layers();
  s.heads = HeadRange(m.num_heads, m.num_kv_heads, l.tp, s.place.tp_index);
  s.ffn = EvenShare(m.intermediate_size, l.tp, s.place.tp_index);
  s.shared_ffn =
      EvenShare(m.moe.shared_intermediate_size * m.moe.num_shared_experts, l.tp, s.place.tp_index);
  s.expert = ExpertRankOf(l, s.place);
  s.expert_ffn = EvenShare(m.moe.expert_intermediate_size, s.expert.etp, s.expert.etp_index);
  s.vocab = VocabRange(m.vocab_size, l.tp, s.place.tp_index);
  return s;
}

}  // namespace shardwise
