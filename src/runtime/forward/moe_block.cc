// A MoE layer: shared expert, routing on the host (identical on every rank, from fp32 router
// logits), the capacity limit, and the routed experts — every expert here split over TP
// (ep = 1), or dispatched to their EP ranks by all-to-all of (token, slot, hidden) records and
// combined the same way back.
#include <algorithm>

#include "../capacity.h"
#include "../routing.h"
#include "stage_state.h"

namespace shardwise {
namespace {

// A row of a token batch and the weight its expert's output is added with.
struct ExpertRow {
  int32_t row = 0;
  float weight = 0;
};

// For each local expert slot, its rows of `in` (kGemmInput [* x hidden]) through its MLP at
// once: out rows += weight x expert(in row).
Status ApplyExperts(StageState& s, const MoeWeights& moe,
                    const std::vector<std::vector<ExpertRow>>& by_slot, const Tensor& in,
                    Tensor& out) {
  const int64_t h = s.model.hidden_size;
  std::vector<int32_t> index;
  std::vector<float> weight;
  for (size_t e = 0; e < by_slot.size(); ++e) {
    const std::vector<ExpertRow>& rows = by_slot[e];
    if (rows.empty()) continue;
    const int64_t n = static_cast<int64_t>(rows.size());
    index.clear();
    weight.clear();
    for (const ExpertRow& r : rows) {
      index.push_back(r.row);
      weight.push_back(r.weight);
    }
    SW_ASSIGN_OR_RETURN(Tensor * gathered, s.Get(Scratch::kGathered, TensorKind::kGemmInput, n, h));
    SW_ASSIGN_OR_RETURN(Tensor * result, s.Get(Scratch::kExpertOut, TensorKind::kFloat, n, h));
    SW_RETURN_IF_ERROR(s.k().GatherRows(in, index, *gathered, h));
    SW_RETURN_IF_ERROR(ApplyMlp(s, moe.experts[e], *gathered, n, *result));
    SW_RETURN_IF_ERROR(s.k().ScatterAddRows(*result, index, weight, out, h));
  }
  return Status();
}

// Routes the step's rows (identical on every rank), drops the pairs over capacity, and counts
// them once over the ranks that hold the same rows.
StatusOr<Routes> Route(StageState& s, const MoeWeights& moe, const Tensor& normed_f32,
                       Communicator& cp) {
  const ModelSpec& m = s.model;
  const int64_t experts = m.moe.num_experts, k = m.moe.experts_per_token;
  const int64_t rows = s.step.rows();
  const int64_t sequences = static_cast<int64_t>(s.step.seqs.size());
  SW_ASSIGN_OR_RETURN(Tensor * logits,
                      s.Get(Scratch::kRouterLogits, TensorKind::kFloat, rows, experts));
  SW_RETURN_IF_ERROR(
      s.k().FloatGemm(normed_f32, *moe.router, moe.router_bias.get(), *logits, rows));
  std::vector<float> staging;
  SW_ASSIGN_OR_RETURN(const float* host, HostView(s, *logits, rows * experts, staging));
  std::vector<float> margins;
  Routes routes =
      RouteTokens(m.moe, m.norm_topk_prob, host,
                  moe.score_bias.empty() ? nullptr : moe.score_bias.data(), rows, &margins);
  const int64_t len = static_cast<int64_t>(s.step.positions.size());
  for (int64_t r = 0; r < rows; ++r) {
    float& mine = s.router_margins[static_cast<size_t>(s.step.seqs[r / len])];
    mine = std::min(mine, margins[static_cast<size_t>(r)]);
  }
  int64_t dropped = 0;
  if (s.moe_options.capacity_factor > 0) {
    SW_ASSIGN_OR_RETURN(dropped, DropOverCapacity(routes, sequences, s.step.positions, s.split, cp,
                                                  s.moe_options.capacity_factor, experts, k));
  }
  // Rows are held by every TP peer, and in decode by every CP rank: count them once.
  if (s.shard.place.tp_index == 0 && (s.split || s.shard.place.cp_index == 0)) {
    s.moe_counts.routed += rows * k;
    s.moe_counts.dropped += dropped;
  }
  return routes;
}

// Expert parallelism. This rank dispatches the tokens t with t % tp == tp_index (its TP peers
// hold the same tokens); each (token, expert) goes to one replica of the expert, the one this
// rank has sent the fewest tokens this layer, on every expert-TP rank holding that replica.
Status Dispatch(StageState& s, const MoeWeights& moe, const Routes& routes,
                const Tensor& normed_f32, Tensor& y, Communicator& stage) {
  const int64_t h = s.model.hidden_size, rows = s.step.rows();
  const ExpertPlacement& placement = s.placement;
  const int ranks = stage.size();
  const int64_t etp = s.layout.ExpertTp(), tp = s.layout.tp;
  const int64_t record = 2 + h;  // token index, slot, hidden
  std::vector<float> staging;
  SW_ASSIGN_OR_RETURN(const float* hin, HostView(s, normed_f32, rows * h, staging));
  std::vector<std::vector<float>> send(static_cast<size_t>(ranks));
  std::vector<int64_t> sent(placement.slot_expert.size(), 0);
  for (int64_t t = s.shard.place.tp_index; t < rows; t += tp) {
    for (const auto& [e, weight] : routes[static_cast<size_t>(t)]) {
      const int64_t slot = ChooseReplica(placement, e, s.shard.place.stage_rank, sent);
      const int64_t owner = placement.Rank(slot);
      for (int64_t j = 0; j < etp; ++j) {
        std::vector<float>& b = send[static_cast<size_t>(owner * etp + j)];
        b.push_back(static_cast<float>(t));
        b.push_back(static_cast<float>(slot));
        b.insert(b.end(), hin + t * h, hin + (t + 1) * h);
      }
    }
  }
  std::vector<float> flat, recv;
  std::vector<int64_t> counts, recv_counts;
  for (const auto& b : send) {
    flat.insert(flat.end(), b.begin(), b.end());
    counts.push_back(static_cast<int64_t>(b.size()));
  }
  SW_RETURN_IF_ERROR(stage.AllToAllV(flat, counts, recv, recv_counts));
  // This rank's share of each requested expert, applied to all its records at once.
  const int64_t n = static_cast<int64_t>(recv.size()) / record;
  SW_ASSIGN_OR_RETURN(Tensor * received, s.Get(Scratch::kReceived, TensorKind::kFloat, n, h));
  SW_ASSIGN_OR_RETURN(Tensor * received_in,
                      s.Get(Scratch::kReceivedIn, TensorKind::kGemmInput, n, h));
  SW_ASSIGN_OR_RETURN(Tensor * reply, s.Get(Scratch::kReply, TensorKind::kFloat, n, h));
  std::vector<float> rows_in(static_cast<size_t>(n * h));
  std::vector<std::vector<ExpertRow>> by_slot(moe.experts.size());
  const int64_t first_slot = ExpertSlots(placement, s.shard.expert.ep_index).begin;
  for (int64_t i = 0; i < n; ++i) {
    std::copy_n(recv.begin() + i * record + 2, h, rows_in.begin() + i * h);
    const int64_t slot = static_cast<int64_t>(recv[static_cast<size_t>(i * record + 1)]);
    by_slot[static_cast<size_t>(slot - first_slot)].push_back({static_cast<int32_t>(i), 1.0f});
  }
  SW_RETURN_IF_ERROR(s.k().Upload(rows_in, *received));
  SW_RETURN_IF_ERROR(s.k().Copy(*received, *received_in, n * h));
  SW_RETURN_IF_ERROR(s.k().Zero(*reply, n * h));
  SW_RETURN_IF_ERROR(ApplyExperts(s, moe, by_slot, *received_in, *reply));
  SW_RETURN_IF_ERROR(s.k().Download(*reply, rows_in));
  std::vector<float> answer(recv.size());
  for (int64_t i = 0; i < n; ++i) {
    answer[static_cast<size_t>(i * record)] = recv[static_cast<size_t>(i * record)];
    answer[static_cast<size_t>(i * record + 1)] = recv[static_cast<size_t>(i * record + 1)];
    std::copy_n(rows_in.begin() + i * h, h, answer.begin() + i * record + 2);
  }
  std::vector<float> back;
  std::vector<int64_t> back_counts;
  SW_RETURN_IF_ERROR(stage.AllToAllV(answer, recv_counts, back, back_counts));
  std::vector<float> y_staging;
  SW_ASSIGN_OR_RETURN(float* out, HostView(s, y, rows * h, y_staging));
  for (size_t off = 0; off < back.size(); off += static_cast<size_t>(record)) {
    const int64_t t = static_cast<int64_t>(back[off]);
    const int64_t e = placement.slot_expert[static_cast<size_t>(back[off + 1])];
    float weight = 0;
    for (const auto& [re, rw] : routes[static_cast<size_t>(t)]) {
      if (re == e) weight = rw;
    }
    for (int64_t d = 0; d < h; ++d) out[t * h + d] += weight * back[off + 2 + d];
  }
  return CommitView(s, y, out, rows * h);
}

}  // namespace

Status MoeBlock(StageState& s, const MoeWeights& moe, const Tensor& normed,
                const Tensor& normed_f32, Tensor& y, const RankComms& c) {
  const int64_t h = s.model.hidden_size, rows = s.step.rows();
  SW_RETURN_IF_ERROR(s.k().Zero(y, rows * h));
  if (moe.shared) {
    SW_ASSIGN_OR_RETURN(Tensor * shared, s.Get(Scratch::kMlpOut, TensorKind::kFloat, rows, h));
    SW_RETURN_IF_ERROR(ApplyMlp(s, *moe.shared, normed, rows, *shared));
    SW_RETURN_IF_ERROR(s.k().AddGatedRows(y, *shared, normed_f32, moe.shared_gate.get(), rows, h));
  }
  SW_ASSIGN_OR_RETURN(const Routes routes, Route(s, moe, normed_f32, *c.cp));
  if (s.layout.ep == 1) {
    // Every expert is here, split over TP: each applies its share to all its tokens at once.
    std::vector<std::vector<ExpertRow>> by_expert(moe.experts.size());
    for (int64_t t = 0; t < rows; ++t) {
      for (const auto& [e, weight] : routes[static_cast<size_t>(t)]) {
        by_expert[static_cast<size_t>(e)].push_back({static_cast<int32_t>(t), weight});
      }
    }
    SW_RETURN_IF_ERROR(ApplyExperts(s, moe, by_expert, normed, y));
  } else {
    SW_RETURN_IF_ERROR(Dispatch(s, moe, routes, normed_f32, y, *c.stage));
  }
  // Each TP peer now holds its own tokens' expert outputs (and its share of the shared
  // expert): the all-reduce completes every token on every peer.
  return AllReduce(s, *c.tp, y, rows * h);
}

}  // namespace shardwise
