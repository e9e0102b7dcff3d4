// ThreadPool: the threads one rank computes with (`run --threads N`). The calling thread is one
// of them; N - 1 workers wait for work, spinning (and yielding) for a while after each task, as
// a decode step hands out dozens of short matrix-vector products, each about as long as waking
// a sleeping thread, and then sleeping. Run() splits a task into parts and returns when every
// part is done. A pool belongs to one rank: one caller at a time, Run() is not reentrant.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace shardwise {

class ThreadPool {
 public:
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return static_cast<int>(workers_.size()) + 1; }
  // Calls part(i) for every i in [0, parts), spread over the threads (the caller included).
  void Run(int parts, const std::function<void(int)>& part);

 private:
  void Work();
  void Wake();  // wakes the sleeping workers, if any
  // Takes parts of task `epoch` until none are left.
  void Drain(uint32_t epoch);

  std::vector<std::thread> workers_;
  const std::function<void(int)>* task_ = nullptr;
  std::atomic<int> parts_{0};  // read by a late worker while the next task is set up
  // The task's epoch (high 32 bits) and its next part (low 32 bits): a worker late for one task
  // can never take a part of the next.
  std::atomic<uint64_t> ticket_{0};
  std::atomic<int> done_{0};        // parts of the current task finished
  std::atomic<uint32_t> epoch_{0};  // bumped for each task
  std::atomic<bool> stop_{false};
  // Workers that stopped spinning sleep here; Run() wakes them only when there are any.
  std::mutex sleep_mu_;
  std::condition_variable wake_;
  std::atomic<int> sleepers_{0};
};

}  // namespace shardwise
