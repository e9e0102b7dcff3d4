// ParallelMap: f(0) .. f(n - 1) on up to the machine's hardware threads, results in index order.
// For independent, thread-safe tasks (the planner's load simulations): the results do not depend
// on how many threads ran them.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <functional>
#include <optional>
#include <thread>
#include <vector>

namespace shardwise {

template <typename T>
std::vector<T> ParallelMap(size_t n, const std::function<T(size_t)>& f) {
  std::vector<std::optional<T>> slots(n);
  std::atomic<size_t> next{0};
  const auto work = [&] {
    for (size_t i = next++; i < n; i = next++) slots[i].emplace(f(i));
  };
  const size_t threads =
      std::min<size_t>(n, std::max<unsigned>(1, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  std::vector<T> out;
  out.reserve(n);
  for (std::optional<T>& s : slots) out.push_back(std::move(*s));
  return out;
}

}  // namespace shardwise
