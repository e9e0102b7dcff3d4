#include "shardwise/runtime/comm/thread_comm.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <thread>

namespace shardwise {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kPollSlice = std::chrono::milliseconds(20);

// State shared by all ranks of one run: the deadline and the abort flag.
struct World {
  double timeout_s = 60;
  std::atomic<bool> aborted{false};
  std::mutex mu;
  std::string reason;

  void Abort(const std::string& why) {
    std::lock_guard<std::mutex> lock(mu);
    if (!aborted.exchange(true)) reason = why;
  }
  std::string Reason() {
    std::lock_guard<std::mutex> lock(mu);
    return reason;
  }
};

// The meeting point of one communicator's ranks.
struct Group {
  World* world = nullptr;
  int size = 0;
  std::vector<int> world_ranks;  // for error messages
  std::mutex mu;
  std::condition_variable cv;
  int64_t generation = 0;
  int arrived = 0;
  std::vector<int64_t> posted;             // generation each rank last reached
  Clock::time_point last_arrival;          // when the last rank reached the latest meeting
  std::vector<std::vector<float>> staged;  // each rank's input to the collective in progress
  std::vector<std::vector<int64_t>> ints;
  std::map<std::pair<int64_t, int>, std::shared_ptr<Group>> splits;
  std::map<std::pair<int, int>, std::deque<std::vector<float>>> mail;

  Group(World* w, std::vector<int> ranks)
      : world(w),
        size(static_cast<int>(ranks.size())),
        world_ranks(std::move(ranks)),
        posted(size, 0),
        staged(size),
        ints(size) {}
};

class ThreadComm final : public Communicator {
 public:
  ThreadComm(int rank, std::shared_ptr<Group> group) : rank_(rank), g_(std::move(group)) {}
  int rank() const override { return rank_; }
  int size() const override { return g_->size; }

 protected:
  Status DoAllReduceSum(std::span<float> data) override {
    SW_RETURN_IF_ERROR(Post(data, "all-reduce"));
    SW_RETURN_IF_ERROR(Meet("all-reduce", /*arrival=*/true));
    std::vector<float> sum(data.size(), 0.0f);
    for (int r = 0; r < g_->size; ++r) {
      const float* p = g_->staged[r].data();
      for (size_t i = 0; i < sum.size(); ++i) sum[i] += p[i];
    }
    SW_RETURN_IF_ERROR(Meet("all-reduce"));
    std::copy(sum.begin(), sum.end(), data.begin());
    return Status();
  }

  Status DoAllGather(std::span<const float> mine, std::span<float> all) override {
    SW_RETURN_IF_ERROR(Post(mine, "all-gather"));
    SW_RETURN_IF_ERROR(Meet("all-gather", /*arrival=*/true));
    for (int r = 0; r < g_->size; ++r) {
      std::memcpy(all.data() + r * mine.size(), g_->staged[r].data(), mine.size_bytes());
    }
    return Meet("all-gather");
  }

  Status DoReduceScatterSum(std::span<const float> all, std::span<float> mine) override {
    SW_RETURN_IF_ERROR(Post(all, "reduce-scatter"));
    SW_RETURN_IF_ERROR(Meet("reduce-scatter", /*arrival=*/true));
    std::fill(mine.begin(), mine.end(), 0.0f);
    for (int r = 0; r < g_->size; ++r) {
      const float* p = g_->staged[r].data() + rank_ * mine.size();
      for (size_t i = 0; i < mine.size(); ++i) mine[i] += p[i];
    }
    return Meet("reduce-scatter");
  }

  Status DoAllToAllV(std::span<const float> send, std::span<const int64_t> send_counts,
                     std::vector<float>& recv, std::vector<int64_t>& recv_counts) override {
    SW_RETURN_IF_ERROR(Post(send, "all-to-all"));
    g_->ints[rank_].assign(send_counts.begin(), send_counts.end());
    SW_RETURN_IF_ERROR(Meet("all-to-all", /*arrival=*/true));
    recv_counts.assign(g_->size, 0);
    recv.clear();
    for (int p = 0; p < g_->size; ++p) {
      const std::vector<int64_t>& counts = g_->ints[p];
      int64_t offset = 0;
      for (int q = 0; q < rank_; ++q) offset += counts[q];
      recv_counts[p] = counts[rank_];
      const float* from = g_->staged[p].data() + offset;
      recv.insert(recv.end(), from, from + counts[rank_]);
    }
    return Meet("all-to-all");
  }

  Status DoSend(std::span<const float> data, int dest) override {
    std::lock_guard<std::mutex> lock(g_->mu);
    g_->mail[{rank_, dest}].emplace_back(data.begin(), data.end());
    g_->cv.notify_all();
    return Status();
  }

  Status DoRecv(std::span<float> data, int source) override {
    std::unique_lock<std::mutex> lock(g_->mu);
    auto& box = g_->mail[{source, rank_}];
    const auto deadline = Deadline();
    while (box.empty() || Clock::now() >= deadline) {
      if (g_->world->aborted) return Aborted("send-recv");
      if (Clock::now() >= deadline) {
        const std::string why =
            fmt::format("send-recv timed out after {:g} s: rank {} did not send to rank {}",
                        g_->world->timeout_s, g_->world_ranks[source], g_->world_ranks[rank_]);
        lock.unlock();
        g_->world->Abort(why);
        return RuntimeFailure(why);
      }
      g_->cv.wait_for(lock, kPollSlice);
    }
    std::vector<float> msg = std::move(box.front());
    box.pop_front();
    if (msg.size() != data.size()) {
      return RuntimeFailure(fmt::format("send-recv: rank {} sent {} floats, rank {} expected {}",
                                        g_->world_ranks[source], msg.size(), g_->world_ranks[rank_],
                                        data.size()));
    }
    std::copy(msg.begin(), msg.end(), data.begin());
    return Status();
  }

  Status DoBroadcast(std::span<float> data, int root) override {
    if (rank_ == root) SW_RETURN_IF_ERROR(Post(data, "broadcast"));
    SW_RETURN_IF_ERROR(Meet("broadcast", /*arrival=*/true));
    if (rank_ != root) std::memcpy(data.data(), g_->staged[root].data(), data.size_bytes());
    return Meet("broadcast");
  }

  Status DoBarrier() override { return Meet("barrier"); }

  double LastArrivalWaitS() const override { return last_wait_s_; }

  StatusOr<std::unique_ptr<Communicator>> DoSplit(int color, int key) override {
    if (g_->world->aborted) return Aborted("split");
    int64_t split_id = 0;
    {
      std::lock_guard<std::mutex> lock(g_->mu);
      g_->ints[rank_] = {color, key};
      split_id = g_->generation;
    }
    SW_RETURN_IF_ERROR(Meet("split"));
    std::vector<std::pair<int64_t, int>> members;  // (key, rank)
    for (int p = 0; p < g_->size; ++p) {
      if (g_->ints[p][0] == color) members.emplace_back(g_->ints[p][1], p);
    }
    std::sort(members.begin(), members.end());
    int new_rank = 0;
    std::vector<int> world_ranks;
    for (size_t i = 0; i < members.size(); ++i) {
      if (members[i].second == rank_) new_rank = static_cast<int>(i);
      world_ranks.push_back(g_->world_ranks[members[i].second]);
    }
    std::shared_ptr<Group> child;
    {
      std::lock_guard<std::mutex> lock(g_->mu);
      auto& slot = g_->splits[{split_id, color}];
      if (!slot) slot = std::make_shared<Group>(g_->world, world_ranks);
      child = slot;
    }
    SW_RETURN_IF_ERROR(Meet("split"));
    return std::unique_ptr<Communicator>(std::make_unique<ThreadComm>(new_rank, child));
  }

 private:
  Clock::time_point Deadline() const {
    return Clock::now() + std::chrono::duration_cast<Clock::duration>(
                              std::chrono::duration<double>(g_->world->timeout_s));
  }

  // Stages this rank's input for its peers, who read it between the collective's two meetings.
  // It is copied into the group rather than pointed to: a rank that leaves early (the world
  // aborted while its peers were still reading) may free its own buffers, never what they
  // read. A rank of an aborted world stages nothing, so it cannot overwrite what a peer still
  // reads from an earlier collective (it could have left that one early only after the abort).
  Status Post(std::span<const float> data, const char* what) {
    if (g_->world->aborted) return Aborted(what);
    g_->staged[rank_].assign(data.begin(), data.end());
    return Status();
  }

  Status Aborted(const char* what) const {
    return RuntimeFailure(fmt::format("{} abandoned: {}", what, g_->world->Reason()));
  }

  // Waits until every rank of the group has reached this point. At a collective's `arrival`,
  // the time from this rank's arrival to the last rank's is kept (LastArrivalWaitS).
  Status Meet(const char* what, bool arrival = false) {
    std::unique_lock<std::mutex> lock(g_->mu);
    const auto arrived_at = Clock::now();
    if (arrival) last_wait_s_ = 0;
    const int64_t gen = g_->generation;
    g_->posted[rank_] = gen + 1;
    if (++g_->arrived == g_->size) {
      g_->arrived = 0;
      ++g_->generation;
      g_->last_arrival = arrived_at;
      g_->cv.notify_all();
      return Status();
    }
    const auto deadline = Deadline();
    // A wait longer than the timeout fails even when the peers arrive during the last poll, so
    // the timeout holds for any positive value.
    while (g_->generation == gen || Clock::now() >= deadline) {
      if (g_->world->aborted) return Aborted(what);
      if (Clock::now() >= deadline) {
        std::string missing;
        for (int r = 0; r < g_->size; ++r) {
          if (g_->posted[r] < gen + 1) {
            missing += (missing.empty() ? "" : ", ") + std::to_string(g_->world_ranks[r]);
          }
        }
        const std::string why =
            missing.empty()
                ? fmt::format("{} timed out: it took longer than {:g} s", what,
                              g_->world->timeout_s)
                : fmt::format("{} timed out after {:g} s: rank{} {} did not arrive", what,
                              g_->world->timeout_s,
                              missing.find(',') == std::string::npos ? "" : "s", missing);
        lock.unlock();
        g_->world->Abort(why);
        return RuntimeFailure(why);
      }
      g_->cv.wait_for(lock, kPollSlice);
    }
    // The next meeting cannot complete without this rank, so last_arrival is still this one's.
    if (arrival)
      last_wait_s_ = std::chrono::duration<double>(g_->last_arrival - arrived_at).count();
    return Status();
  }

  int rank_;
  double last_wait_s_ = 0;
  std::shared_ptr<Group> g_;
};

}  // namespace

Status RunOnThreads(int ranks, double timeout_s, const std::function<Status(Communicator&)>& body) {
  if (ranks < 1) return Error("the run needs at least one rank");
  World world;
  world.timeout_s = timeout_s;
  std::vector<int> all(ranks);
  for (int r = 0; r < ranks; ++r) all[r] = r;
  auto root = std::make_shared<Group>(&world, all);
  std::vector<Status> results(ranks);
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r) {
    threads.emplace_back([&, r] {
      ThreadComm comm(r, root);
      try {
        results[r] = body(comm);
      } catch (const std::exception& e) {
        results[r] = RuntimeFailure(fmt::format("rank {}: {}", r, e.what()));
      }
      if (!results[r].ok() && !world.aborted) {
        world.Abort(fmt::format("rank {} failed: {}", r, results[r].message()));
      }
    });
  }
  for (std::thread& t : threads) t.join();
  // Report the root cause: the first rank whose error is not another rank's abort.
  for (const Status& s : results) {
    if (!s.ok() && s.message().find("abandoned:") == std::string::npos) return s;
  }
  for (const Status& s : results) {
    if (!s.ok()) return s;
  }
  return Status();
}

}  // namespace shardwise
