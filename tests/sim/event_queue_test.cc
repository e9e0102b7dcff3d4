// The simulator's event queue against the one binary heap it replaced: for any interleaving of
// pushes and pops, the events come out in (time, insertion order), as a single
// std::priority_queue of (time, order) gives them.
#include "event_queue.h"

#include <gtest/gtest.h>

#include <queue>
#include <random>
#include <vector>

namespace shardwise::sim_state {
namespace {

TEST(EventQueue, PopsAsOneHeapOrderedByTimeThenInsertion) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    const size_t front_ends = 1 + trial % 5;
    EventQueue q(front_ends);
    std::priority_queue<Event, std::vector<Event>, std::greater<>> reference;
    std::vector<double> front_end_clock(front_ends, 0.0);
    int64_t order = 0;
    double now = 0;
    std::uniform_real_distribution<double> u(0, 1);
    for (int step = 0; step < 400; ++step) {
      const double x = u(rng);
      if (x < 0.35) {
        // A front end's arrival: never earlier than its previous one; times collide often.
        const size_t f = rng() % front_ends;
        front_end_clock[f] = std::max(front_end_clock[f], now) + (u(rng) < 0.3 ? 0.0 : 0.01);
        q.PushVisible(f, front_end_clock[f], step);
        reference.push({front_end_clock[f], order++, EventKind::kVisible, step});
      } else if (x < 0.6) {
        const double t = now + (u(rng) < 0.3 ? 0.0 : 0.02 * u(rng));
        q.Push(t, EventKind::kStepDone, step);
        reference.push({t, order++, EventKind::kStepDone, step});
      } else if (!reference.empty()) {
        ASSERT_FALSE(q.Empty());
        const Event want = reference.top();
        const Event got = q.Top();
        EXPECT_EQ(got.time_s, want.time_s);
        EXPECT_EQ(got.index, want.index) << "trial " << trial << " step " << step;
        EXPECT_EQ(got.kind, want.kind);
        now = want.time_s;
        reference.pop();
        q.Pop();
      }
    }
    while (!reference.empty()) {
      ASSERT_FALSE(q.Empty());
      EXPECT_EQ(q.Top().index, reference.top().index);
      reference.pop();
      q.Pop();
    }
    EXPECT_TRUE(q.Empty());
  }
}

}  // namespace
}  // namespace shardwise::sim_state
