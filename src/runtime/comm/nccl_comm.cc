#include "nccl_comm.h"

#include <fmt/format.h>
#include <nccl.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "shardwise/runtime/cuda/device.h"

namespace shardwise {
namespace {

using Clock = std::chrono::steady_clock;
using cuda::CudaStatus;
using cuda::DeviceBuffer;

Status NcclStatus(ncclResult_t r, std::string_view what) {
  if (r == ncclSuccess || r == ncclInProgress) return Status();
  return RuntimeFailure(fmt::format("{}: NCCL error: {}", what, ncclGetErrorString(r)));
}

ncclConfig_t NonBlocking() {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  return config;
}

Clock::time_point DeadlineAfter(double timeout_s) {
  return Clock::now() +
         std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s));
}

// Waits for a new communicator to leave ncclInProgress (initialisation, split); aborts it on
// an error or at the deadline.
Status WaitReady(ncclComm_t comm, double timeout_s, const char* what, int rank) {
  const Clock::time_point deadline = DeadlineAfter(timeout_s);
  for (;;) {
    ncclResult_t state = ncclSuccess;
    Status s = NcclStatus(ncclCommGetAsyncError(comm, &state), what);
    if (s.ok() && state == ncclSuccess) return Status();
    if (s.ok() && state != ncclInProgress) s = NcclStatus(state, what);
    if (s.ok() && Clock::now() >= deadline) {
      s = RuntimeFailure(
          fmt::format("{} timed out after {:g} s on rank {}: a peer rank died or stalled (NCCL "
                      "communicator aborted)",
                      what, timeout_s, rank));
    }
    if (!s.ok()) {
      (void)ncclCommAbort(comm);
      return s;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
}

// A ready communicator of one rank.
class NcclComm final : public Communicator {
 public:
  NcclComm(ncclComm_t comm, int device, double timeout_s, cuda::Stream stream)
      : comm_(comm), device_(device), timeout_s_(timeout_s), stream_(std::move(stream)) {
    (void)ncclCommUserRank(comm_, &rank_);
    (void)ncclCommCount(comm_, &size_);
  }
  // Abort, not destroy: it is local (never waits for a peer that may be gone) and frees the
  // communicator's resources all the same (NCCL documentation, ncclCommAbort).
  ~NcclComm() override {
    if (comm_ != nullptr) (void)ncclCommAbort(comm_);
  }
  NcclComm(const NcclComm&) = delete;
  NcclComm& operator=(const NcclComm&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  // Opens every point-to-point connection now (a grouped exchange of one float with each
  // peer), so later sends of small messages complete without waiting for the peer to post
  // its receive, as MPI's eager sends do.
  Status Connect() {
    SW_RETURN_IF_ERROR(Stage(size_t(size_) * 2));
    SW_RETURN_IF_ERROR(NcclStatus(ncclGroupStart(), "ncclGroupStart"));
    for (int r = 0; r < size_; ++r) {
      if (r == rank_) continue;
      SW_RETURN_IF_ERROR(
          NcclStatus(ncclSend(send_.data() + r, 1, ncclFloat, r, comm_, st()), "ncclSend"));
      SW_RETURN_IF_ERROR(
          NcclStatus(ncclRecv(recv_.data() + r, 1, ncclFloat, r, comm_, st()), "ncclRecv"));
    }
    SW_RETURN_IF_ERROR(NcclStatus(ncclGroupEnd(), "ncclGroupEnd"));
    return Wait("connect");
  }

 protected:
  Status DoAllReduceSum(std::span<float> data) override {
    SW_RETURN_IF_ERROR(In(data));
    SW_RETURN_IF_ERROR(Enqueued(
        ncclAllReduce(send_.data(), recv_.data(), data.size(), ncclFloat, ncclSum, comm_, st()),
        "all-reduce"));
    SW_RETURN_IF_ERROR(Wait("all-reduce"));
    return Out(data);
  }
  Status DoAllGather(std::span<const float> mine, std::span<float> all) override {
    SW_RETURN_IF_ERROR(In(mine, all.size()));
    SW_RETURN_IF_ERROR(
        Enqueued(ncclAllGather(send_.data(), recv_.data(), mine.size(), ncclFloat, comm_, st()),
                 "all-gather"));
    SW_RETURN_IF_ERROR(Wait("all-gather"));
    return Out(all);
  }
  Status DoReduceScatterSum(std::span<const float> all, std::span<float> mine) override {
    SW_RETURN_IF_ERROR(In(all));
    SW_RETURN_IF_ERROR(Enqueued(
        ncclReduceScatter(send_.data(), recv_.data(), mine.size(), ncclFloat, ncclSum, comm_, st()),
        "reduce-scatter"));
    SW_RETURN_IF_ERROR(Wait("reduce-scatter"));
    return Out(mine);
  }
  // Counts travel first (an all-gather of every rank's send counts), then the payload as one
  // group of ncclSend/ncclRecv pairs.
  Status DoAllToAllV(std::span<const float> send, std::span<const int64_t> send_counts,
                     std::vector<float>& recv, std::vector<int64_t>& recv_counts) override {
    const size_t n = static_cast<size_t>(size_);
    SW_RETURN_IF_ERROR(Grow(counts_, n + n * n));
    SW_RETURN_IF_ERROR(
        CudaStatus(cudaMemcpyAsync(counts_.data(), send_counts.data(), n * sizeof(int64_t),
                                   cudaMemcpyHostToDevice, st()),
                   "cudaMemcpyAsync"));
    SW_RETURN_IF_ERROR(
        Enqueued(ncclAllGather(counts_.data(), counts_.data() + n, n, ncclInt64, comm_, st()),
                 "all-to-all"));
    SW_RETURN_IF_ERROR(Wait("all-to-all"));
    std::vector<int64_t> all(n * n);
    SW_RETURN_IF_ERROR(
        CudaStatus(cudaMemcpyAsync(all.data(), counts_.data() + n, all.size() * sizeof(int64_t),
                                   cudaMemcpyDeviceToHost, st()),
                   "cudaMemcpyAsync"));
    SW_RETURN_IF_ERROR(CudaStatus(cudaStreamSynchronize(st()), "cudaStreamSynchronize"));
    recv_counts.assign(n, 0);
    int64_t total = 0;
    for (size_t r = 0; r < n; ++r) {
      recv_counts[r] = all[r * n + static_cast<size_t>(rank_)];
      total += recv_counts[r];
    }
    SW_RETURN_IF_ERROR(In(send, static_cast<size_t>(total)));
    SW_RETURN_IF_ERROR(NcclStatus(ncclGroupStart(), "ncclGroupStart"));
    size_t send_off = 0, recv_off = 0;
    for (size_t r = 0; r < n; ++r) {
      const size_t sc = static_cast<size_t>(send_counts[r]),
                   rc = static_cast<size_t>(recv_counts[r]);
      if (sc > 0) {
        SW_RETURN_IF_ERROR(NcclStatus(
            ncclSend(send_.data() + send_off, sc, ncclFloat, static_cast<int>(r), comm_, st()),
            "ncclSend"));
      }
      if (rc > 0) {
        SW_RETURN_IF_ERROR(NcclStatus(
            ncclRecv(recv_.data() + recv_off, rc, ncclFloat, static_cast<int>(r), comm_, st()),
            "ncclRecv"));
      }
      send_off += sc;
      recv_off += rc;
    }
    SW_RETURN_IF_ERROR(Enqueued(ncclGroupEnd(), "all-to-all"));
    SW_RETURN_IF_ERROR(Wait("all-to-all"));
    recv.assign(static_cast<size_t>(total), 0.0f);
    return Out(std::span<float>(recv));
  }
  Status DoSend(std::span<const float> data, int dest) override {
    SW_RETURN_IF_ERROR(In(data));
    SW_RETURN_IF_ERROR(
        Enqueued(ncclSend(send_.data(), data.size(), ncclFloat, dest, comm_, st()), "send-recv"));
    return Wait("send-recv");
  }
  Status DoRecv(std::span<float> data, int source) override {
    SW_RETURN_IF_ERROR(Stage(data.size()));
    SW_RETURN_IF_ERROR(
        Enqueued(ncclRecv(recv_.data(), data.size(), ncclFloat, source, comm_, st()), "send-recv"));
    SW_RETURN_IF_ERROR(Wait("send-recv"));
    return Out(data);
  }
  Status DoBroadcast(std::span<float> data, int root) override {
    SW_RETURN_IF_ERROR(In(data));
    SW_RETURN_IF_ERROR(Enqueued(
        ncclBroadcast(send_.data(), recv_.data(), data.size(), ncclFloat, root, comm_, st()),
        "broadcast"));
    SW_RETURN_IF_ERROR(Wait("broadcast"));
    return Out(data);
  }
  // NCCL has no barrier: an all-reduce of one float is one.
  Status DoBarrier() override {
    SW_RETURN_IF_ERROR(Stage(1));
    SW_RETURN_IF_ERROR(Enqueued(
        ncclAllReduce(send_.data(), recv_.data(), 1, ncclFloat, ncclSum, comm_, st()), "barrier"));
    return Wait("barrier");
  }
  StatusOr<std::unique_ptr<Communicator>> DoSplit(int color, int key) override {
    if (color < 0) return Error("Split: the NCCL backend needs a non-negative color");
    SW_RETURN_IF_ERROR(cuda::UseDevice(device_));
    ncclConfig_t config = NonBlocking();
    ncclComm_t child = nullptr;
    SW_RETURN_IF_ERROR(Enqueued(ncclCommSplit(comm_, color, key, &child, &config), "split"));
    SW_RETURN_IF_ERROR(Wait("split"));  // the parent finishes its part of the split
    SW_RETURN_IF_ERROR(WaitReady(child, timeout_s_, "split", rank_));
    SW_ASSIGN_OR_RETURN(cuda::Stream stream, cuda::Stream::Create());
    auto out = std::make_unique<NcclComm>(child, device_, timeout_s_, std::move(stream));
    SW_RETURN_IF_ERROR(out->Connect());
    return std::unique_ptr<Communicator>(std::move(out));
  }

 private:
  cudaStream_t st() const { return stream_.get(); }

  template <typename T>
  static Status Grow(DeviceBuffer<T>& b, size_t n) {
    if (b.size() >= n) return Status();
    b = DeviceBuffer<T>();
    SW_ASSIGN_OR_RETURN(b, DeviceBuffer<T>::Allocate(std::max<size_t>(n, 1024)));
    return Status();
  }
  Status Stage(size_t n) {
    SW_RETURN_IF_ERROR(cuda::UseDevice(device_));
    SW_RETURN_IF_ERROR(Grow(send_, n));
    return Grow(recv_, n);
  }
  // Copies `data` into the send buffer (staging at least `recv_n` elements for the output).
  Status In(std::span<const float> data, size_t recv_n = 0) {
    SW_RETURN_IF_ERROR(Stage(std::max(data.size(), recv_n)));
    if (data.empty()) return Status();
    return CudaStatus(
        cudaMemcpyAsync(send_.data(), data.data(), data.size_bytes(), cudaMemcpyHostToDevice, st()),
        "cudaMemcpyAsync (host to device)");  // stream-ordered before the collective
  }
  Status Out(std::span<float> data) {
    if (data.empty()) return Status();
    SW_RETURN_IF_ERROR(CudaStatus(
        cudaMemcpyAsync(data.data(), recv_.data(), data.size_bytes(), cudaMemcpyDeviceToHost, st()),
        "cudaMemcpyAsync (device to host)"));
    return CudaStatus(cudaStreamSynchronize(st()), "cudaStreamSynchronize");
  }

  Status Enqueued(ncclResult_t r, const char* what) {
    if (r == ncclSuccess || r == ncclInProgress) return Status();
    return Fail(what, NcclStatus(r, what));
  }
  Status Fail(const char* what, Status s) {
    (void)what;
    if (comm_ != nullptr) (void)ncclCommAbort(comm_);
    comm_ = nullptr;
    return s;
  }
  Status TimedOut(const char* what, int world_rank) {
    (void)ncclCommAbort(comm_);
    comm_ = nullptr;
    return RuntimeFailure(
        fmt::format("{} timed out after {:g} s on rank {} (group of {}): a peer rank died or "
                    "stalled (NCCL communicator aborted)",
                    what, timeout_s_, world_rank, size_));
  }

  // Polls the stream and the communicator's asynchronous error until the work is done, NCCL
  // reports an error, or the deadline passes; sleeps between polls so ranks sharing cores
  // leave them to each other.
  Status Wait(const char* what) {
    if (comm_ == nullptr)
      return RuntimeFailure(fmt::format("{}: the NCCL communicator was aborted earlier", what));
    const Clock::time_point deadline = DeadlineAfter(timeout_s_);
    for (int polls = 0;; ++polls) {
      ncclResult_t state = ncclSuccess;
      SW_RETURN_IF_ERROR(NcclStatus(ncclCommGetAsyncError(comm_, &state), what));
      if (state != ncclSuccess && state != ncclInProgress)
        return Fail(what, NcclStatus(state, what));
      if (state == ncclSuccess) {
        const cudaError_t q = cudaStreamQuery(st());
        if (q == cudaSuccess) return Status();
        if (q != cudaErrorNotReady) return Fail(what, CudaStatus(q, what));
      }
      if (Clock::now() >= deadline) return TimedOut(what, rank_);
      if (polls > 100) std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }

  ncclComm_t comm_;
  int device_;
  double timeout_s_;
  cuda::Stream stream_;
  int rank_ = 0;
  int size_ = 1;
  DeviceBuffer<float> send_, recv_;
  DeviceBuffer<int64_t> counts_;
};

}  // namespace

StatusOr<std::unique_ptr<Communicator>> NcclWorld(Communicator& bootstrap, int device,
                                                  double timeout_s) {
  SW_RETURN_IF_ERROR(cuda::UseDevice(device));
  // The 128-byte unique id, one byte per float (exact), from rank 0 to all.
  ncclUniqueId id{};
  std::vector<float> bytes(sizeof(id.internal), 0.0f);
  if (bootstrap.rank() == 0) {
    SW_RETURN_IF_ERROR(NcclStatus(ncclGetUniqueId(&id), "ncclGetUniqueId"));
    for (size_t i = 0; i < bytes.size(); ++i)
      bytes[i] = static_cast<float>(static_cast<unsigned char>(id.internal[i]));
  }
  SW_RETURN_IF_ERROR(bootstrap.Broadcast(bytes, 0));
  for (size_t i = 0; i < bytes.size(); ++i)
    id.internal[i] = static_cast<char>(static_cast<unsigned char>(bytes[i]));
  ncclConfig_t config = NonBlocking();
  ncclComm_t comm = nullptr;
  SW_RETURN_IF_ERROR(
      NcclStatus(ncclCommInitRankConfig(&comm, bootstrap.size(), id, bootstrap.rank(), &config),
                 "ncclCommInitRankConfig"));
  SW_RETURN_IF_ERROR(WaitReady(comm, timeout_s, "NCCL initialisation", bootstrap.rank()));
  SW_ASSIGN_OR_RETURN(cuda::Stream stream, cuda::Stream::Create());
  auto out = std::make_unique<NcclComm>(comm, device, timeout_s, std::move(stream));
  SW_RETURN_IF_ERROR(out->Connect());
  return std::unique_ptr<Communicator>(std::move(out));
}

}  // namespace shardwise
