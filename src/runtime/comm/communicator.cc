#include "shardwise/runtime/comm/communicator.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

namespace shardwise {

std::string_view CommOpName(CommOp op) {
  static constexpr std::array<std::string_view, kCommOpCount> kNames = {
      "all-reduce", "all-gather", "reduce-scatter", "all-to-all",
      "send-recv",  "broadcast",  "barrier"};
  return kNames[static_cast<int>(op)];
}

void CommStats::Merge(const CommStats& other) {
  for (int i = 0; i < kCommOpCount; ++i) {
    ops[i].calls += other.ops[i].calls;
    ops[i].bytes += other.ops[i].bytes;
    ops[i].seconds += other.ops[i].seconds;
    ops[i].wait_seconds += other.ops[i].wait_seconds;
  }
}

double CommStats::TotalSeconds() const {
  double s = 0;
  for (const CommOpStats& op : ops) s += op.seconds;
  return s;
}

double CommStats::TotalWaitSeconds() const {
  double s = 0;
  for (const CommOpStats& op : ops) s += op.wait_seconds;
  return s;
}

template <typename F>
Status Communicator::Timed(CommOp op, double bytes, F&& call) {
  using Clock = std::chrono::steady_clock;
  // Point-to-point waits are the pipeline's bubble (runner.h) and a barrier is all waiting.
  const bool collective = op != CommOp::kSendRecv && op != CommOp::kBarrier;
  const bool tracked = LastArrivalWaitS() >= 0 || size() == 1;
  const auto start = Clock::now();
  double wait_s = 0;
  if (collective && !tracked) {
    SW_RETURN_IF_ERROR(DoBarrier());
    wait_s = std::chrono::duration<double>(Clock::now() - start).count();
  }
  Status s = call();
  const double elapsed_s = std::chrono::duration<double>(Clock::now() - start).count();
  if (collective && tracked) wait_s = std::clamp(LastArrivalWaitS(), 0.0, elapsed_s);
  CommOpStats& st = stats_[op];
  st.calls += 1;
  st.bytes += bytes;
  st.seconds += elapsed_s;
  st.wait_seconds += op == CommOp::kBarrier ? elapsed_s : wait_s;
  return s;
}

namespace {
constexpr double kFloat = sizeof(float);
}

Status Communicator::AllReduceSum(std::span<float> data) {
  return Timed(CommOp::kAllReduce, kFloat * data.size(), [&] { return DoAllReduceSum(data); });
}

Status Communicator::AllGather(std::span<const float> mine, std::span<float> all) {
  SW_CHECK(all.size() == mine.size() * static_cast<size_t>(size()), "AllGather: wrong output size");
  return Timed(CommOp::kAllGather, kFloat * mine.size(), [&] { return DoAllGather(mine, all); });
}

Status Communicator::ReduceScatterSum(std::span<const float> all, std::span<float> mine) {
  SW_CHECK(all.size() == mine.size() * static_cast<size_t>(size()),
           "ReduceScatterSum: wrong input size");
  return Timed(CommOp::kReduceScatter, kFloat * all.size(),
               [&] { return DoReduceScatterSum(all, mine); });
}

Status Communicator::AllToAllV(std::span<const float> send, std::span<const int64_t> send_counts,
                               std::vector<float>& recv, std::vector<int64_t>& recv_counts) {
  SW_CHECK(send_counts.size() == static_cast<size_t>(size()), "AllToAllV: one count per rank");
  return Timed(CommOp::kAllToAll, kFloat * send.size(),
               [&] { return DoAllToAllV(send, send_counts, recv, recv_counts); });
}

Status Communicator::Send(std::span<const float> data, int dest) {
  return Timed(CommOp::kSendRecv, kFloat * data.size(), [&] { return DoSend(data, dest); });
}

Status Communicator::Recv(std::span<float> data, int source) {
  return Timed(CommOp::kSendRecv, 0, [&] { return DoRecv(data, source); });
}

Status Communicator::Broadcast(std::span<float> data, int root) {
  return Timed(CommOp::kBroadcast, rank() == root ? kFloat * data.size() : 0.0,
               [&] { return DoBroadcast(data, root); });
}

Status Communicator::Barrier() {
  return Timed(CommOp::kBarrier, 0, [&] { return DoBarrier(); });
}

StatusOr<std::unique_ptr<Communicator>> Communicator::Split(int color, int key) {
  return DoSplit(color, key);
}

}  // namespace shardwise
