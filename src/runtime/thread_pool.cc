#include "shardwise/runtime/thread_pool.h"

#include <chrono>

#include "shardwise/common/status.h"

namespace shardwise {
namespace {

using Clock = std::chrono::steady_clock;

// How long an idle worker keeps polling before it sleeps: longer than the gap between two
// matrix products of one decode step (attention, norms and a collective, ~0.1 ms on the
// catalog's small models), shorter than anything a user would notice as a busy core.
constexpr auto kSpin = std::chrono::milliseconds(2);

constexpr uint64_t Ticket(uint32_t epoch, uint32_t part) {
  return (static_cast<uint64_t>(epoch) << 32) | part;
}

}  // namespace

ThreadPool::ThreadPool(int threads) {
  SW_CHECK(threads >= 1, "ThreadPool needs at least one thread");
  for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { Work(); });
}

ThreadPool::~ThreadPool() {
  stop_.store(true);
  epoch_.fetch_add(1);
  Wake();
  for (std::thread& t : workers_) t.join();
}

void ThreadPool::Wake() {
  // A sleeper counts itself and checks the epoch under the lock, so once the epoch is stored,
  // either it is counted here or it sees the new epoch (both sequentially consistent).
  if (sleepers_.load() == 0) return;
  { std::lock_guard<std::mutex> lock(sleep_mu_); }
  wake_.notify_all();
}

void ThreadPool::Run(int parts, const std::function<void(int)>& part) {
  if (workers_.empty() || parts <= 1) {
    for (int i = 0; i < parts; ++i) part(i);
    return;
  }
  const uint32_t epoch = epoch_.load(std::memory_order_relaxed) + 1;
  task_ = &part;
  parts_.store(parts, std::memory_order_relaxed);
  done_.store(0, std::memory_order_relaxed);
  ticket_.store(Ticket(epoch, 0), std::memory_order_release);
  epoch_.store(epoch);
  Wake();
  Drain(epoch);
  while (done_.load(std::memory_order_acquire) < parts) std::this_thread::yield();
}

void ThreadPool::Drain(uint32_t epoch) {
  uint64_t ticket = ticket_.load(std::memory_order_acquire);
  for (;;) {
    const uint32_t part = static_cast<uint32_t>(ticket);
    if (ticket >> 32 != epoch ||
        part >= static_cast<uint32_t>(parts_.load(std::memory_order_relaxed)))
      return;
    if (!ticket_.compare_exchange_weak(ticket, ticket + 1, std::memory_order_acq_rel)) continue;
    (*task_)(static_cast<int>(part));
    done_.fetch_add(1, std::memory_order_release);
    ticket = ticket_.load(std::memory_order_acquire);
  }
}

void ThreadPool::Work() {
  // The epoch the pool was built with: a worker that starts late still sees every later one.
  uint32_t seen = 0;
  for (;;) {
    const auto idle_since = Clock::now();
    uint32_t now = epoch_.load(std::memory_order_acquire);
    while (now == seen && Clock::now() - idle_since < kSpin) {
      std::this_thread::yield();
      now = epoch_.load(std::memory_order_acquire);
    }
    if (now == seen) {
      std::unique_lock<std::mutex> lock(sleep_mu_);
      sleepers_.fetch_add(1);
      wake_.wait(lock, [&] { return stop_.load() || epoch_.load() != seen; });
      sleepers_.fetch_sub(1);
      now = epoch_.load();
    }
    if (stop_.load()) return;
    seen = now;
    Drain(now);
  }
}

}  // namespace shardwise
