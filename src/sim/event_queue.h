// The serving simulator's events (sim/sim.h), popped in (time, insertion order). A request
// reaches its scheduler through a front end that never lets a later request overtake an earlier
// one (sim/front_end.h), so each front end's visibility events come in order and wait in a FIFO of
// their own; only those FIFOs' heads and the few other events (arrivals, iteration ends, KV
// transfers) share a heap. A closed loop's bursts of thousands of routed requests then cost O(1)
// each instead of a sift through a heap that size. Internal to sim/; not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <queue>
#include <vector>

#include "sim_state.h"

namespace shardwise::sim_state {

class EventQueue {
 public:
  EventQueue() = default;
  explicit EventQueue(size_t front_ends) : visible_(front_ends) {}

  // An event of any kind but kVisible.
  void Push(double time_s, EventKind kind, int64_t index);
  // Request `request` reaches the scheduler behind `front_end` at `time_s`, no earlier than the
  // front end's previous one.
  void PushVisible(size_t front_end, double time_s, int64_t request);
  bool Empty() const { return events_.empty() && heads_.empty(); }
  // The next event; requires !Empty().
  const Event& Top() const;
  void Pop();

 private:
  struct Head {
    double time_s;
    int64_t order;
    size_t front_end;
    bool operator>(const Head& o) const {
      return time_s != o.time_s ? time_s > o.time_s : order > o.order;
    }
  };
  // Whether the next event is a front end's (else the heap's).
  bool NextIsVisible() const;

  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
  std::vector<std::deque<Event>> visible_;  // per front end, in time order
  std::priority_queue<Head, std::vector<Head>, std::greater<>> heads_;  // non-empty FIFOs' heads
  int64_t order_ = 0;
};

}  // namespace shardwise::sim_state
