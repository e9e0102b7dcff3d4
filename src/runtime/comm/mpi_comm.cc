#include "mpi_comm.h"

#include <fmt/format.h>
#include <mpi.h>

#include <chrono>
#include <thread>

namespace shardwise {
namespace {

using Clock = std::chrono::steady_clock;

// Owns an MPI communicator (frees it unless it is MPI_COMM_WORLD). Move-only.
class MpiComm final : public Communicator {
 public:
  MpiComm(MPI_Comm comm, double timeout_s, bool owned)
      : comm_(comm), timeout_s_(timeout_s), owned_(owned) {
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
  }
  ~MpiComm() override {
    if (owned_ && comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
  }
  MpiComm(const MpiComm&) = delete;
  MpiComm& operator=(const MpiComm&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }

 protected:
  Status DoAllReduceSum(std::span<float> data) override {
    MPI_Request req;
    MPI_Iallreduce(MPI_IN_PLACE, data.data(), Count(data.size()), MPI_FLOAT, MPI_SUM, comm_, &req);
    return Wait(req, "all-reduce");
  }
  Status DoAllGather(std::span<const float> mine, std::span<float> all) override {
    MPI_Request req;
    MPI_Iallgather(mine.data(), Count(mine.size()), MPI_FLOAT, all.data(), Count(mine.size()),
                   MPI_FLOAT, comm_, &req);
    return Wait(req, "all-gather");
  }
  Status DoReduceScatterSum(std::span<const float> all, std::span<float> mine) override {
    MPI_Request req;
    MPI_Ireduce_scatter_block(all.data(), mine.data(), Count(mine.size()), MPI_FLOAT, MPI_SUM,
                              comm_, &req);
    return Wait(req, "reduce-scatter");
  }
  Status DoAllToAllV(std::span<const float> send, std::span<const int64_t> send_counts,
                     std::vector<float>& recv, std::vector<int64_t>& recv_counts) override {
    recv_counts.assign(static_cast<size_t>(size_), 0);
    MPI_Request req;
    MPI_Ialltoall(send_counts.data(), 1, MPI_INT64_T, recv_counts.data(), 1, MPI_INT64_T, comm_,
                  &req);
    SW_RETURN_IF_ERROR(Wait(req, "all-to-all"));
    std::vector<int> sc(size_), sd(size_), rc(size_), rd(size_);
    int so = 0, ro = 0;
    for (int r = 0; r < size_; ++r) {
      sc[r] = static_cast<int>(send_counts[r]);
      rc[r] = static_cast<int>(recv_counts[r]);
      sd[r] = so;
      rd[r] = ro;
      so += sc[r];
      ro += rc[r];
    }
    recv.assign(static_cast<size_t>(ro), 0.0f);
    MPI_Ialltoallv(send.data(), sc.data(), sd.data(), MPI_FLOAT, recv.data(), rc.data(), rd.data(),
                   MPI_FLOAT, comm_, &req);
    return Wait(req, "all-to-all");
  }
  Status DoSend(std::span<const float> data, int dest) override {
    MPI_Request req;
    MPI_Isend(data.data(), Count(data.size()), MPI_FLOAT, dest, 0, comm_, &req);
    return Wait(req, "send-recv");
  }
  Status DoRecv(std::span<float> data, int source) override {
    MPI_Request req;
    MPI_Irecv(data.data(), Count(data.size()), MPI_FLOAT, source, 0, comm_, &req);
    return Wait(req, "send-recv");
  }
  Status DoBroadcast(std::span<float> data, int root) override {
    MPI_Request req;
    MPI_Ibcast(data.data(), Count(data.size()), MPI_FLOAT, root, comm_, &req);
    return Wait(req, "broadcast");
  }
  Status DoBarrier() override {
    MPI_Request req;
    MPI_Ibarrier(comm_, &req);
    return Wait(req, "barrier");
  }
  StatusOr<std::unique_ptr<Communicator>> DoSplit(int color, int key) override {
    MPI_Comm child;
    MPI_Comm_split(comm_, color, key, &child);
    return std::unique_ptr<Communicator>(std::make_unique<MpiComm>(child, timeout_s_, true));
  }

 private:
  static int Count(size_t n) { return static_cast<int>(n); }

  // Polls `req` until done or the deadline; sleeps between polls so oversubscribed ranks leave
  // the cores to each other.
  Status Wait(MPI_Request& req, const char* what) {
    const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                             std::chrono::duration<double>(timeout_s_));
    int done = 0;
    for (int polls = 0;; ++polls) {
      MPI_Test(&req, &done, MPI_STATUS_IGNORE);
      // A wait longer than the timeout fails even when it completed on the last poll.
      if (done && Clock::now() < deadline) return Status();
      if (Clock::now() >= deadline) {
        int world_rank = 0;
        MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
        return RuntimeFailure(fmt::format(
            "{} timed out after {:g} s on rank {} (group of {}): a peer rank died or stalled", what,
            timeout_s_, world_rank, size_));
      }
      if (polls > 100) std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }

  MPI_Comm comm_;
  double timeout_s_;
  bool owned_;
  int rank_ = 0;
  int size_ = 0;
};

}  // namespace

Status RunOnMpi(int ranks, double timeout_s, const std::function<Status(Communicator&)>& body) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) MPI_Init(nullptr, nullptr);
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != ranks) {
    MPI_Finalize();
    return Error(
        fmt::format("the layout needs {} ranks but mpirun started {}; run 'mpirun -np {} "
                    "shardwise run ... --backend mpi'",
                    ranks, size, ranks));
  }
  Status result;
  {
    MpiComm world(MPI_COMM_WORLD, timeout_s, false);
    result = body(world);
  }
  if (result.ok() || result.code() != StatusCode::kUnavailable) MPI_Finalize();
  return result;
}

void AbortMpi(int exit_code) { MPI_Abort(MPI_COMM_WORLD, exit_code); }

int MpiWorldRank() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) return 0;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

}  // namespace shardwise
