// Communicator: the collectives the sharded runtime needs, over a group of ranks. One
// interface, several backends (in-process threads, Open MPI). Every call is timed and its bytes
// counted per kind, here in the base class, so all backends are measured the same way. A
// collective's time is split into waiting (from this rank's arrival until the last rank of the
// group arrived: a slower peer, not the wire) and the rest: backends that see every rank's
// arrival (threads) report it; for the others the base class meets the group at a barrier
// first and counts that barrier as waiting. A
// collective that does not complete within the deadline fails with a runtime error naming it
// (and, where the backend knows, the ranks that did not arrive). An instance belongs to one
// rank; it is not thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "shardwise/common/status.h"

namespace shardwise {

enum class CommOp {
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kAllToAll,
  kSendRecv,
  kBroadcast,
  kBarrier
};
constexpr int kCommOpCount = 7;
std::string_view CommOpName(CommOp op);

struct CommOpStats {
  int64_t calls = 0;
  double bytes = 0;         // bytes this rank sent
  double seconds = 0;       // wall time inside the call, waiting included
  double wait_seconds = 0;  // of which waiting for the group's last rank to arrive
  double wire_seconds() const { return seconds - wait_seconds; }
};

struct CommStats {
  std::array<CommOpStats, kCommOpCount> ops{};
  const CommOpStats& operator[](CommOp op) const { return ops[static_cast<int>(op)]; }
  CommOpStats& operator[](CommOp op) { return ops[static_cast<int>(op)]; }
  void Merge(const CommStats& other);
  double TotalSeconds() const;
  double TotalWaitSeconds() const;
};

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;

  Status AllReduceSum(std::span<float> data);
  // `all` holds size() blocks of mine.size(), in rank order.
  Status AllGather(std::span<const float> mine, std::span<float> all);
  // Sums `all` (size() blocks) across ranks and keeps this rank's block in `mine`.
  Status ReduceScatterSum(std::span<const float> all, std::span<float> mine);
  // Sends send_counts[r] floats to rank r (in rank order); receives into `recv` and fills
  // `recv_counts` with what each rank sent here.
  Status AllToAllV(std::span<const float> send, std::span<const int64_t> send_counts,
                   std::vector<float>& recv, std::vector<int64_t>& recv_counts);
  Status Send(std::span<const float> data, int dest);
  Status Recv(std::span<float> data, int source);
  Status Broadcast(std::span<float> data, int root);
  Status Barrier();
  // Ranks with the same color form a new communicator, ordered by key then rank.
  StatusOr<std::unique_ptr<Communicator>> Split(int color, int key);

  const CommStats& stats() const { return stats_; }

 protected:
  virtual Status DoAllReduceSum(std::span<float> data) = 0;
  virtual Status DoAllGather(std::span<const float> mine, std::span<float> all) = 0;
  virtual Status DoReduceScatterSum(std::span<const float> all, std::span<float> mine) = 0;
  virtual Status DoAllToAllV(std::span<const float> send, std::span<const int64_t> send_counts,
                             std::vector<float>& recv, std::vector<int64_t>& recv_counts) = 0;
  virtual Status DoSend(std::span<const float> data, int dest) = 0;
  virtual Status DoRecv(std::span<float> data, int source) = 0;
  virtual Status DoBroadcast(std::span<float> data, int root) = 0;
  virtual Status DoBarrier() = 0;
  virtual StatusOr<std::unique_ptr<Communicator>> DoSplit(int color, int key) = 0;
  // For a backend that sees every rank's arrival: the seconds this rank waited in the
  // collective it completed last for the group's last rank to arrive. Backends that cannot tell
  // return a negative value (the default): the base class then times a barrier before each
  // collective instead.
  virtual double LastArrivalWaitS() const { return -1; }

 private:
  template <typename F>
  Status Timed(CommOp op, double bytes, F&& call);
  CommStats stats_;
};

}  // namespace shardwise
