#include "event_queue.h"

#include "shardwise/common/check.h"

namespace shardwise::sim_state {

void EventQueue::Push(double time_s, EventKind kind, int64_t index) {
  events_.push({time_s, order_++, kind, index});
}

void EventQueue::PushVisible(size_t front_end, double time_s, int64_t request) {
  std::deque<Event>& fifo = visible_[front_end];
  SW_CHECK(fifo.empty() || fifo.back().time_s <= time_s, "a front end let a request overtake");
  fifo.push_back({time_s, order_++, EventKind::kVisible, request});
  if (fifo.size() == 1) heads_.push({time_s, fifo.front().order, front_end});
}

bool EventQueue::NextIsVisible() const {
  if (heads_.empty()) return false;
  if (events_.empty()) return true;
  const Head& h = heads_.top();
  const Event& e = events_.top();
  return h.time_s != e.time_s ? h.time_s < e.time_s : h.order < e.order;
}

const Event& EventQueue::Top() const {
  return NextIsVisible() ? visible_[heads_.top().front_end].front() : events_.top();
}

void EventQueue::Pop() {
  if (!NextIsVisible()) {
    events_.pop();
    return;
  }
  const size_t front_end = heads_.top().front_end;
  heads_.pop();
  std::deque<Event>& fifo = visible_[front_end];
  fifo.pop_front();
  if (!fifo.empty()) heads_.push({fifo.front().time_s, fifo.front().order, front_end});
}

}  // namespace shardwise::sim_state
